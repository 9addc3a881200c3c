package lift

import (
	"errors"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// FuzzLift feeds random bytes through decode → lift → Verify: Translate
// must never panic and never return an unverifiable block; its only
// acceptable error is a fetch fault.
func FuzzLift(f *testing.F) {
	for _, c := range execCases {
		f.Add(hexCode(f, c.code))
	}
	for _, s := range []string{"64488b042528000000", "f30f1efa", "c5f877", "0f38ff", "660f3a63c11a", "f3a4", "480fc70e"} {
		f.Add(hexCode(f, s))
	}
	f.Fuzz(func(t *testing.T, code []byte) {
		if len(code) == 0 || len(code) > 4*gvinst.PageSize {
			return
		}
		mem := codeMem(t, code)
		l := NewLifter(mem)
		for _, off := range []uint64{0, 1, 3} {
			if off >= uint64(len(code)) {
				break
			}
			for _, lift := range []func(uint64) (*gvinst.VBlock, error){l.Translate, l.LiftInst} {
				blk, err := lift(testCode + off)
				if err != nil {
					var f *gvinst.Fault
					if !errors.As(err, &f) {
						t.Fatalf("lift at +%d of % x: %v", off, code, err)
					}
					continue
				}
				if err := gvinst.Verify(blk); err != nil {
					t.Fatalf("unverifiable block at +%d of % x: %v", off, code, err)
				}
				if _, err := gvinst.Parse(gvinst.Print(blk)); err != nil {
					t.Fatalf("block text does not parse: %v\n%s", err, gvinst.Print(blk))
				}
			}
		}
	})
}
