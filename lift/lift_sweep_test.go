package lift

import (
	"debug/elf"
	"errors"
	"flag"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

var sweepLimit = flag.Int("sweep", 40000, "how many instructions TestSweepLibc lifts per library")

// sweepText maps the .text section of the ELF file at path into guest
// memory and lifts one instruction at every address of a linear sweep
// (at most limit instructions). It fails on any lifter error and returns
// how often each mnemonic was not lifted.
func sweepText(t *testing.T, path string, limit int) (lifted int, unsupported map[string]int) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Skipf("no %s: %v", path, err)
	}
	defer f.Close()
	sec := f.Section(".text")
	if sec == nil {
		t.Skipf("%s has no .text", path)
	}
	data, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	base := sec.Addr &^ (gvinst.PageSize - 1)
	mem := gvinst.NewMemory(0)
	if err := mem.Map(base, sec.Addr-base+uint64(len(data)), gvinst.PermRead|gvinst.PermExec); err != nil {
		t.Fatal(err)
	}
	if err := mem.Poke(sec.Addr, data); err != nil {
		t.Fatal(err)
	}
	l := NewLifter(mem)
	unsupported = make(map[string]int)
	pc, end := sec.Addr, sec.Addr+uint64(len(data))
	for n := 0; pc < end && n < limit; n++ {
		d, err := l.dec.Decode(pc)
		if err != nil {
			pc++
			continue
		}
		blk, err := l.LiftInst(pc)
		if err != nil {
			var f *gvinst.Fault
			if errors.As(err, &f) {
				break
			}
			t.Fatalf("%s: %v", path, err)
		}
		if in := blk.Insts[0]; in.Op == gvinst.OpTrap && gvinst.TrapKind(in.Mod) == gvinst.TrapUnsupported {
			mn, _, _ := strings.Cut(d.Text, " ")
			if mn == "lock" || mn == "rep" || mn == "repne" || mn == "data16" {
				mn = d.Inst.Op.String()
			}
			unsupported[mn]++
		} else {
			lifted++
		}
		pc = d.Next()
	}
	return lifted, unsupported
}

func reportUnsupported(t *testing.T, lifted int, unsupported map[string]int) {
	type kv struct {
		k string
		v int
	}
	var list []kv
	total := 0
	for k, v := range unsupported {
		list = append(list, kv{k, v})
		total += v
	}
	sort.Slice(list, func(i, j int) bool { return list[i].v > list[j].v || list[i].v == list[j].v && list[i].k < list[j].k })
	var sb strings.Builder
	for _, e := range list {
		sb.WriteString(" ")
		sb.WriteString(e.k)
		sb.WriteString(":")
		sb.WriteString(strings.TrimSpace(strings.Repeat(" ", 0) + itoa(e.v)))
	}
	t.Logf("lifted %d instructions, %d unsupported:%s", lifted, total, sb.String())
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// TestSweepLibc lifts (a linear sweep of) the host's glibc and musl, gcc
// output at -O2: no instruction may make the lifter fail.
func TestSweepLibc(t *testing.T) {
	limit := *sweepLimit
	if testing.Short() {
		limit = 5000
	}
	for _, path := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib/ld-musl-x86_64.so.1"} {
		t.Run(path, func(t *testing.T) {
			lifted, unsupported := sweepText(t, path, limit)
			reportUnsupported(t, lifted, unsupported)
		})
	}
}

// TestSweepSelf lifts the test binary's own code (Go compiler output).
func TestSweepSelf(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	lifted, unsupported := sweepText(t, exe, 20000)
	reportUnsupported(t, lifted, unsupported)
}

// BenchmarkLift measures Translate over the first blocks of the host's
// libc (gcc -O2 output), a block starting at every instruction.
func BenchmarkLift(b *testing.B) {
	const path = "/lib/x86_64-linux-gnu/libc.so.6"
	f, err := elf.Open(path)
	if err != nil {
		b.Skipf("no %s", path)
	}
	defer f.Close()
	sec := f.Section(".text")
	data, err := sec.Data()
	if err != nil || len(data) < 1<<16 {
		b.Skip("no usable .text")
	}
	data = data[:1<<16]
	base := sec.Addr &^ (gvinst.PageSize - 1)
	mem := gvinst.NewMemory(0)
	if err := mem.Map(base, sec.Addr-base+uint64(len(data)), gvinst.PermRead|gvinst.PermExec); err != nil {
		b.Fatal(err)
	}
	if err := mem.Poke(sec.Addr, data); err != nil {
		b.Fatal(err)
	}
	var addrs []uint64
	d := NewDecoder(mem)
	for pc := sec.Addr; pc < sec.Addr+uint64(len(data))-16; {
		in, err := d.Decode(pc)
		if err != nil {
			pc++
			continue
		}
		addrs = append(addrs, pc)
		pc = in.Next()
	}
	b.Run("libc/lifter", func(b *testing.B) {
		insts := 0
		l := NewLifter(mem)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			blk, err := l.Translate(addrs[i%len(addrs)])
			if err != nil {
				b.Fatal(err)
			}
			insts += len(blk.Guest)
		}
		b.ReportMetric(float64(insts)/b.Elapsed().Seconds(), "guestinsts/s")
	})
}
