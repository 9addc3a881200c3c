//go:build linux && amd64

package jit

import (
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// TestCountDown runs sumLoop with a COUNT at its header on both engines:
// the probe hook is called where the site's counter is zero (it sets it
// to 999 again, so once every thousand iterations), a site without a
// counter calls it every time, and compiled code takes from the counter
// inline, without a callout.
func TestCountDown(t *testing.T) {
	const n = 3000
	for _, site := range []int{0, 5} {
		src := strings.Replace(sumLoop, "  # 0x1010: add rax, qword ptr [rdi]\n", "  # 0x1010: add rax, qword ptr [rdi]\n  COUNT "+string(rune('0'+site))+"\n", 1)
		wantCalls := 3 // iterations 1, 1001 and 2001
		if site >= 2 {
			wantCalls = n
		}
		for _, kind := range []string{"interp", "jit"} {
			mem := gvinst.NewMemory(0)
			if err := mem.Map(dataBase, 16*gvinst.PageSize, gvinst.PermRead|gvinst.PermWrite); err != nil {
				t.Fatal(err)
			}
			counts := make([]int64, 2)
			calls := 0
			opts := gvinst.InterpOptions{Counts: counts, Optimize: true}
			opts.Probe = func(s uint32, addr uint64, size int) {
				if s != uint32(site) || addr != 0 || size != 1 {
					t.Errorf("%s: probe(%d, %#x, %d), want (%d, 0, 1)", kind, s, addr, size, site)
				}
				calls++
				if int(s) < len(counts) {
					counts[s] = 999
				}
			}
			tr := newTextTranslator(t, mem, src)
			var e gvinst.Engine = gvinst.NewInterpreter(mem, tr, opts)
			if kind == "jit" {
				j, err := New(mem, tr, opts)
				if err != nil {
					t.Fatal(err)
				}
				defer j.Close()
				e = j
			}
			cpu := &gvinst.CPU{PC: 0x1000}
			cpu.State[gvinst.S7] = dataBase
			cpu.State[gvinst.S1] = n
			if stop := e.Run(cpu, 0); stop.Kind != gvinst.StopSyscall {
				t.Fatalf("%s site %d: stop = %v", kind, site, stop)
			}
			if calls != wantCalls {
				t.Errorf("%s site %d: %d probe calls, want %d", kind, site, calls, wantCalls)
			}
			if site < len(counts) && counts[site] != 999-(n-2001) {
				t.Errorf("%s site %d: counter left at %d, want %d", kind, site, counts[site], 999-(n-2001))
			}
			if kind == "jit" {
				st := e.Stats()
				if st.UnitsCompiled == 0 {
					t.Errorf("site %d: nothing compiled", site)
				}
				if got := st.CalloutsByOp["COUNT"]; site < len(counts) && got > uint64(wantCalls) {
					t.Errorf("site %d: %d callouts of COUNT, want at most the %d probe calls", site, got, wantCalls)
				}
			}
		}
	}
}
