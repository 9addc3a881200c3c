package lift

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// TestGCCDifferential compiles testdata/gccfuncs.c with the host's gcc at
// several optimization levels, runs it natively (its main prints every
// function's result for fixed inputs), then calls each function's lifted
// code in the interpreter with the same inputs and compares the results.
func TestGCCDifferential(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc on PATH")
	}
	levels := []string{"-O0", "-O2", "-O3", "-O3 -march=x86-64-v2"}
	if testing.Short() {
		levels = levels[2:3]
	}
	for _, level := range levels {
		t.Run(level, func(t *testing.T) {
			exe := filepath.Join(t.TempDir(), "gccfuncs")
			args := append(strings.Fields(level), "-fno-math-errno", "-fno-trapping-math", "-fno-tree-loop-distribute-patterns",
				"-no-pie", "-o", exe, "testdata/gccfuncs.c")
			if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
				t.Skipf("gcc %s failed: %v\n%s", level, err, out)
			}
			out, err := exec.Command(exe).Output()
			if err != nil {
				t.Fatalf("native run: %v", err)
			}
			want := map[string]uint64{}
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				f := strings.Fields(sc.Text())
				v, err := strconv.ParseUint(f[3], 16, 64)
				if len(f) != 4 || err != nil {
					t.Fatalf("bad native output line %q", sc.Text())
				}
				want[f[0]+" "+f[1]+" "+f[2]] = v
			}
			g := loadGuest(t, exe)
			checkGCC(t, g, want)
		})
	}
}

// gccGuest is a no-pie executable loaded into guest memory.
type gccGuest struct {
	mem  *gvinst.Memory
	it   *gvinst.Interpreter
	syms map[string]uint64
}

const (
	gccRet   = 0x10000    // an int3 the functions return to
	gccBuf   = 0x20000000 // array arguments
	gccStack = 0x30000000 // top of the stack
)

func loadGuest(t *testing.T, path string) *gccGuest {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mem := gvinst.NewMemory(0)
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		lo := p.Vaddr &^ (gvinst.PageSize - 1)
		perm := gvinst.PermRead
		if p.Flags&elf.PF_W != 0 {
			perm |= gvinst.PermWrite
		}
		if p.Flags&elf.PF_X != 0 {
			perm |= gvinst.PermExec
		}
		if err := mem.Map(lo, p.Vaddr+p.Memsz-lo, perm); err != nil {
			t.Fatal(err)
		}
		data := make([]byte, p.Filesz)
		if _, err := p.ReadAt(data, 0); err != nil {
			t.Fatal(err)
		}
		if err := mem.Poke(p.Vaddr, data); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range []struct {
		addr, size uint64
		perm       gvinst.Perm
	}{
		{gccRet, gvinst.PageSize, gvinst.PermRead | gvinst.PermExec},
		{gccBuf, 4 * gvinst.PageSize, gvinst.PermRead | gvinst.PermWrite},
		{gccStack - 16*gvinst.PageSize, 16 * gvinst.PageSize, gvinst.PermRead | gvinst.PermWrite},
	} {
		if err := mem.Map(m.addr, m.size, m.perm); err != nil {
			t.Fatal(err)
		}
	}
	if err := mem.Poke(gccRet, []byte{0xcc}); err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	g := &gccGuest{mem: mem, syms: map[string]uint64{}}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			g.syms[s.Name] = s.Value
		}
	}
	g.it = gvinst.NewInterpreter(mem, NewLifter(mem), gvinst.InterpOptions{Optimize: true})
	return g
}

// call runs the function name with integer arguments ints and double
// arguments floats, and returns rax and the low 64 bits of xmm0.
func (g *gccGuest) call(t *testing.T, name string, ints []uint64, floats []float64) (uint64, uint64) {
	t.Helper()
	addr, ok := g.syms[name]
	if !ok {
		t.Fatalf("no symbol %s", name)
	}
	cpu := &gvinst.CPU{PC: addr}
	sp := uint64(gccStack - 8)
	if err := g.mem.Store(sp, 8, gccRet); err != nil {
		t.Fatal(err)
	}
	cpu.State[rsp] = sp
	cpu.State[gvinst.RFLAGS] = 0x202
	cpu.State[gvinst.MXCSR] = 0x1f80
	cpu.State[gvinst.FPCW] = 0x37f
	for i, r := range []gvinst.Reg{rdi, rsi, rdx} {
		if i < len(ints) {
			cpu.State[r] = ints[i]
		}
	}
	for i, v := range floats {
		cpu.State[xlo(i)] = math.Float64bits(v)
	}
	stop := g.it.Run(cpu, 50_000_000)
	if stop.Kind != gvinst.StopTrap || stop.Trap != gvinst.TrapBreakpoint || stop.PC != gccRet {
		t.Fatalf("%s%v: stopped with %v", name, ints, stop)
	}
	return cpu.State[rax], cpu.State[xlo(0)]
}

var (
	gccIntFuncs   = []string{"f_gcd", "f_collatz", "f_mix", "f_div32", "f_mulhi", "f_bits", "f_switch", "f_minmax", "f_narrow", "f_add128"}
	gccFloatFuncs = []string{"g_poly", "g_conv", "g_floor"}
	gccArrayFuncs = []string{"h_sum", "h_strlen", "h_sort", "h_fsum", "h_bytes", "h_fscale", "h_short"}
	gccArrayKind  = []int{0, 1, 0, 2, 1, 3, 4}
	gccIntVals    = [][3]uint64{
		{0, 1, 2}, {12, 18, 5}, {0xffffffffffffffff, 3, 7}, {0x8000000000000000, 0xffffffffffffffff, 1},
		{123456789, 987654321, 63}, {0x7fffffff, 0x80000000, 0xffffffff}, {17, 0, 0x1234}, {0xdeadbeefcafebabe, 0x0123456789abcdef, 0x55},
	}
	gccFloatVals = [][2]float64{{0, 1}, {1.5, -2.25}, {-7.75, 3.0}, {1e10, 1e-3}, {math.Copysign(0, -1), 0.5}, {123.456, 78.9}, {2.5, 2.5}, {-1e300, 1e300}}
	gccLens      = []int{1, 7, 64, 301}
)

// gccFill writes the array fill() in gccfuncs.c makes.
func gccFill(kind, n int) []byte {
	var buf bytes.Buffer
	for i := 0; i < n; i++ {
		switch kind {
		case 0:
			binary.Write(&buf, binary.LittleEndian, int32(uint32(i)*2654435761)-12345)
		case 1:
			c := "abcdefgha"[i%9]
			if i == n-1 {
				c = 0
			}
			buf.WriteByte(c)
		case 2:
			binary.Write(&buf, binary.LittleEndian, float64(float64(i%17)*0.37)-2.0)
		case 3:
			binary.Write(&buf, binary.LittleEndian, float32(float32(i%13)*0.25)-1.0)
		case 4:
			binary.Write(&buf, binary.LittleEndian, int16(uint32(i)*40503))
		}
	}
	return buf.Bytes()
}

func checkGCC(t *testing.T, g *gccGuest, want map[string]uint64) {
	compare := func(key, what string, got uint64) {
		w, ok := want[key]
		if !ok {
			t.Fatalf("native output lacks %q", key)
		}
		if got != w {
			t.Errorf("%s: got %#x, native %#x", what, got, w)
		}
	}
	for f, name := range gccIntFuncs {
		for i, v := range gccIntVals {
			got, _ := g.call(t, name, v[:], nil)
			compare(fmt.Sprintf("i %d %d", f, i), fmt.Sprintf("%s(%#x, %#x, %#x)", name, v[0], v[1], v[2]), got)
		}
	}
	for f, name := range gccFloatFuncs {
		for i, v := range gccFloatVals {
			_, got := g.call(t, name, nil, v[:])
			compare(fmt.Sprintf("d %d %d", f, i), fmt.Sprintf("%s(%g, %g)", name, v[0], v[1]), got)
		}
	}
	for f, name := range gccArrayFuncs {
		for i, n := range gccLens {
			if err := g.mem.Poke(gccBuf, gccFill(gccArrayKind[f], n)); err != nil {
				t.Fatal(err)
			}
			got, _ := g.call(t, name, []uint64{gccBuf, uint64(n)}, nil)
			compare(fmt.Sprintf("a %d %d", f, i), fmt.Sprintf("%s(n=%d)", name, n), got)
		}
	}
}
