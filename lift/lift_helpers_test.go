package lift

import (
	"encoding/hex"
	"flag"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

var dumpFlag = flag.String("dump", "", "comma-separated hex code blocks to lift and print (TestDump)")

// Test memory layout.
const (
	testCode  = 0x400000
	testData  = 0x600000
	testStack = 0x7f0000
)

// codeMem returns guest memory with code mapped r-x at testCode, a
// read-write data page at testData and a stack page below testStack.
func codeMem(t testing.TB, code []byte) *gvinst.Memory {
	t.Helper()
	mem := gvinst.NewMemory(0)
	if err := mem.Map(testCode, uint64(len(code))+1, gvinst.PermRead|gvinst.PermWrite|gvinst.PermExec); err != nil {
		t.Fatal(err)
	}
	if err := mem.Poke(testCode, code); err != nil {
		t.Fatal(err)
	}
	if err := mem.Protect(testCode, uint64(len(code))+1, gvinst.PermRead|gvinst.PermExec); err != nil {
		t.Fatal(err)
	}
	if err := mem.Map(testData, 2*gvinst.PageSize, gvinst.PermRead|gvinst.PermWrite); err != nil {
		t.Fatal(err)
	}
	if err := mem.Map(testStack-gvinst.PageSize, gvinst.PageSize, gvinst.PermRead|gvinst.PermWrite); err != nil {
		t.Fatal(err)
	}
	return mem
}

// hexCode parses space-separated hex bytes.
func hexCode(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// liftHex lifts the block at the start of code.
func liftHex(t testing.TB, s string) *gvinst.VBlock {
	t.Helper()
	l := NewLifter(codeMem(t, hexCode(t, s)))
	blk, err := l.Translate(testCode)
	if err != nil {
		t.Fatalf("lift %s: %v", s, err)
	}
	return blk
}

// TestDump prints the blocks lifted from the -dump hex strings (a tool
// for writing golden cases).
func TestDump(t *testing.T) {
	if *dumpFlag == "" {
		t.Skip("no -dump given")
	}
	for _, s := range strings.Split(*dumpFlag, ",") {
		if s == "" {
			continue
		}
		t.Log("\n" + gvinst.Print(liftHex(t, s)))
	}
}
