package ptxgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/ptx"
)

// FuzzGenerate feeds GVInst text to the generator: it must never panic,
// and every kernel it produces must parse as PTX.
func FuzzGenerate(f *testing.F) {
	for _, s := range []string{saxpyO2, intO0, matmul2D, dotNest, matmulO2, opLoop("VSHUFP.f32 v6, v0, v2, 27"), opLoop("DIVW.s32 v6, v4, v0, v2"), opLoop("CVT.rz.s32.f64 v6, v0")} {
		f.Add(s)
	}
	if names, err := filepath.Glob(filepath.Join("testdata", "fuzz-regressions", "*.gvinst")); err == nil {
		for _, n := range names {
			if b, err := os.ReadFile(n); err == nil {
				f.Add(string(b))
			}
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		bs, err := gvinst.Parse(src)
		if err != nil || len(bs) == 0 {
			return
		}
		n := &Nest{Header: bs[0].Addr, Blocks: map[uint64]*gvinst.VBlock{}}
		for _, b := range bs {
			n.Blocks[b.Addr] = b
		}
		// Without exit states, then with every exit's code reading
		// nothing (each exit gives its state where the level lets it),
		// then reading everything.
		var dead, live gvinst.Liveness
		for i := range live.Slot {
			live.Slot[i], live.High[i] = true, true
		}
		for _, exits := range []*gvinst.Liveness{nil, &dead, &live} {
			n.Inner, n.InnerBlocks, n.ExitLive = 0, nil, nil
			if exits != nil {
				n.ExitLive = map[uint64]*gvinst.Liveness{}
				for _, b := range bs {
					for _, s := range b.Successors() {
						if n.Blocks[s] == nil {
							n.ExitLive[s] = exits
						}
					}
				}
			}
			for _, inner := range []bool{false, true} {
				if inner {
					if len(bs) < 2 {
						return
					}
					n.Inner, n.InnerBlocks = bs[1].Addr, map[uint64]bool{bs[1].Addr: true}
				}
				k, err := Generate(n)
				if err != nil {
					continue
				}
				checkText(t, k.PTX)
			}
		}
	})
}

// checkText checks a generated kernel's text against the ptx package's
// model: it parses and checks, and printing what it parses to gives the
// text back byte for byte (but the leading comment lines, which the
// parser does not keep).
func checkText(t *testing.T, src string) {
	t.Helper()
	m, err := ptx.Parse(src)
	if err != nil {
		t.Fatalf("generated PTX does not parse: %v\n%s", err, numbered(src))
	}
	if err := ptx.Check(m); err != nil {
		t.Fatalf("generated PTX does not check: %v\n%s", err, numbered(src))
	}
	body := src
	for strings.HasPrefix(body, "//") {
		_, body, _ = strings.Cut(body, "\n")
	}
	if got := ptx.Print(m); got != body {
		t.Fatalf("the printed kernel differs from the generated text:\n%s\n--- generated ---\n%s", got, body)
	}
}
