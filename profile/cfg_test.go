package profile

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/lift"
	"github.com/gxbit/gxbit/loader"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// loaded is a test binary loaded into guest memory.
type loaded struct {
	mem  *gvinst.Memory
	lift *lift.Lifter
	im   Image
	img  *loader.Image
}

func loadBinary(t testing.TB, path string) *loaded {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := loader.ParseELF(path, data)
	if err != nil {
		t.Fatal(err)
	}
	mem := gvinst.NewMemory(1 << 30)
	img, err := loader.Load(mem, prog, loader.LoadOptions{Args: []string{path}})
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := prog.Span()
	im := Image{Entry: img.ProgramEntry(), Lo: lo + img.Bias, Hi: hi + img.Bias}
	for _, s := range img.Symbols {
		if s.IsFun {
			im.Symbols = append(im.Symbols, Symbol{Name: s.Name, Addr: s.Addr, Size: s.Size})
		}
	}
	return &loaded{mem: mem, lift: lift.NewLifter(mem), im: im, img: img}
}

// relAddrs rewrites absolute addresses as offsets from the function that
// holds them, so that the golden text survives relinking.
func relAddrs(p *Program, text string) string {
	re := regexp.MustCompile(`0x[0-9a-f]+`)
	return re.ReplaceAllStringFunc(text, func(s string) string {
		v, _ := strconv.ParseUint(s[2:], 16, 64)
		var best *Func
		for _, f := range p.Funcs {
			for _, b := range f.Blocks {
				if v >= b.Addr && v <= b.End {
					best = f
				}
			}
		}
		if best == nil {
			return s
		}
		return fmt.Sprintf("%s+%#x", best.Name, v-best.Entry)
	})
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file; got:\n%s\nwant:\n%s", name, got, want)
	}
}

func TestGoldenLoops(t *testing.T) {
	for _, opt := range []string{"O0", "O2", "O3"} {
		t.Run(opt, func(t *testing.T) {
			b := loadBinary(t, filepath.Join("testdata", "kernels-"+opt))
			p := RecoverImage(b.lift, b.mem, b.im, 0)
			for _, f := range p.Funcs {
				if f.Err != nil {
					t.Errorf("%s: %v", f.Name, f.Err)
				}
			}
			text := relAddrs(p, FormatLoops(p, nil))
			golden(t, "loops-"+opt+".golden", text)
		})
	}
}

// TestStripped checks that the functions and loops of a program are found
// without its symbol table: from the entry point and the call targets.
func TestStripped(t *testing.T) {
	b := loadBinary(t, filepath.Join("testdata", "kernels-O2"))
	withSyms := RecoverImage(b.lift, b.mem, b.im, 0)
	im := b.im
	im.Symbols = nil
	stripped := RecoverImage(b.lift, b.mem, im, 0)
	count := func(p *Program) (n int) {
		for _, f := range p.Funcs {
			n += len(f.Loops)
		}
		return n
	}
	if a, s := count(withSyms), count(stripped); a != s || a == 0 {
		t.Errorf("loops with symbols %d, stripped %d", a, s)
	}
	if !strings.Contains(FormatLoops(stripped, nil), "fn_0x") {
		t.Errorf("stripped functions should be named fn_0x…")
	}
}
