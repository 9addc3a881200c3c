//go:build linux && amd64

package jit

import (
	"reflect"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// TestCompileAfterOtherUnits compiles the blocks of a few test programs,
// plain and optimized, in one order and again in the reverse order: the
// tables and buffers that compileTrace keeps from one unit for the next
// (unitFactsPool) must leave nothing of one unit in another's code.
func TestCompileAfterOtherUnits(t *testing.T) {
	var blocks []*gvinst.VBlock
	for _, src := range []string{sumLoop, divLoop, recursion, guardedJump, storeIntoLaterBlock} {
		bs, err := gvinst.Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, vb := range bs {
			c := *vb
			c.Insts = append([]gvinst.Inst(nil), vb.Insts...)
			if err := gvinst.Optimize(&c); err != nil {
				t.Fatal(err)
			}
			blocks = append(blocks, vb, &c)
		}
	}
	compile := func(i int) *compiled {
		cu, err := compileUnit(blocks[i], uint32(i), i%3 == 0, i%2-1, unitEnv{tlbFromMachine: [2]int64{1 << 20, 1 << 21}})
		if err != nil {
			t.Fatalf("block %d: %v", i, err)
		}
		return cu
	}
	first := make([]*compiled, len(blocks))
	for i := range blocks {
		first[i] = compile(i)
	}
	for i := len(blocks) - 1; i >= 0; i-- {
		if again := compile(i); !reflect.DeepEqual(again, first[i]) {
			t.Errorf("block %d (%#x) compiles differently after other units:\n%x\nfirst:\n%x", i, blocks[i].Addr, again.code, first[i].code)
		}
	}
}
