package lift

import (
	"errors"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
	"golang.org/x/arch/x86/x86asm"
)

func TestFlagsDeadAtExit(t *testing.T) {
	cases := []struct {
		name string
		code string
		dead bool
	}{
		{"ret", "4801c8 c3", true},
		{"call", "4801c8 e800000000", true},
		{"indirect call", "4801c8 ffd0", true},
		{"loop whose both successors write flags", "4803 04cf 48ffc1 4839d1 7cf4 c3", true},
		{"successor reads flags", "4801c8 eb00 7200 c3", false},
		{"successor moves then compares", "4801c8 eb00 89c8 85c0 7400", true},
		{"successor incs (reads CF)", "4801c8 eb00 ffc0 c3", false},
		{"indirect jump", "4801c8 ffe0", false},
		{"syscall reads flags into r11", "4801c8 0f05", false},
		{"trap", "4801c8 0f0b", false},
		{"shift by cl may keep flags", "4801c8 eb00 d3e0 c3", false},
		{"shift by immediate writes flags", "4801c8 eb00 c1e002 c3", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			blk := liftHex(t, c.code)
			if blk.FlagsDeadAtExit != c.dead {
				t.Errorf("FlagsDeadAtExit = %v, want %v\n%s", blk.FlagsDeadAtExit, c.dead, gvinst.Print(blk))
			}
			// The first instruction's FLAGS is dropped exactly when the
			// flags are dead at exit (nothing in these blocks reads them).
			hasFlags := false
			for _, in := range blk.Insts {
				if in.Op == gvinst.OpFlags && in.X86 == testCode {
					hasFlags = true
				}
			}
			if hasFlags == c.dead {
				t.Errorf("FLAGS of the add kept = %v with FlagsDeadAtExit = %v\n%s", hasFlags, c.dead, gvinst.Print(blk))
			}
		})
	}
}

func TestMaxInstsSplitsBlock(t *testing.T) {
	l := NewLifter(codeMem(t, hexCode(t, "90 90 90 90 c3")))
	l.MaxInsts = 2
	blk, err := l.Translate(testCode)
	if err != nil {
		t.Fatal(err)
	}
	last := blk.Insts[len(blk.Insts)-1]
	if last.Op != gvinst.OpJmp || last.Target[0] != testCode+2 || blk.End != testCode+2 || len(blk.Guest) != 2 {
		t.Errorf("block not split after 2 instructions:\n%s", gvinst.Print(blk))
	}
}

func TestLiftInst(t *testing.T) {
	l := NewLifter(codeMem(t, hexCode(t, "4801c8 c3")))
	blk, err := l.LiftInst(testCode)
	if err != nil {
		t.Fatal(err)
	}
	last := blk.Insts[len(blk.Insts)-1]
	if last.Op != gvinst.OpJmp || last.Target[0] != testCode+3 || len(blk.Guest) != 1 {
		t.Errorf("LiftInst did not lift one instruction:\n%s", gvinst.Print(blk))
	}
	if blk.FlagsDeadAtExit || !strings.Contains(gvinst.Print(blk), "FLAGS.add.u64") {
		t.Errorf("single-instruction block must keep its flags:\n%s", gvinst.Print(blk))
	}
	if l.MaxInsts != DefaultMaxInsts {
		t.Errorf("LiftInst changed MaxInsts to %d", l.MaxInsts)
	}
}

func TestTranslateFetchFault(t *testing.T) {
	l := NewLifter(codeMem(t, hexCode(t, "c3")))
	_, err := l.Translate(testData) // mapped but not executable
	var f *gvinst.Fault
	if !errors.As(err, &f) || f.Addr != testData || f.Access != gvinst.AccessExec {
		t.Fatalf("Translate of a non-executable page: %v, want an exec fault", err)
	}
	var de *DecodeError
	if !errors.As(err, &de) || de.Addr != testData {
		t.Fatalf("error %v is not a DecodeError at %#x", err, testData)
	}
}

func TestBlockEndsBeforeUnfetchableCode(t *testing.T) {
	// The code page's last bytes are nops; the next page is not mapped.
	mem := gvinst.NewMemory(0)
	if err := mem.Map(testCode, gvinst.PageSize, gvinst.PermRead|gvinst.PermExec); err != nil {
		t.Fatal(err)
	}
	end := uint64(testCode + gvinst.PageSize)
	if err := mem.Poke(end-2, []byte{0x90, 0x90}); err != nil {
		t.Fatal(err)
	}
	blk, err := NewLifter(mem).Translate(end - 2)
	if err != nil {
		t.Fatal(err)
	}
	last := blk.Insts[len(blk.Insts)-1]
	if last.Op != gvinst.OpJmp || last.Target[0] != end {
		t.Errorf("block does not end with a jump to the unmapped page:\n%s", gvinst.Print(blk))
	}
	// An instruction that straddles into the unmapped page faults.
	if err := mem.Poke(end-2, []byte{0x48, 0x8b}); err != nil {
		t.Fatal(err)
	}
	_, err = NewLifter(mem).Translate(end - 2)
	var f *gvinst.Fault
	if !errors.As(err, &f) || f.Addr != end {
		t.Errorf("straddling instruction: %v, want a fault at %#x", err, end)
	}
}

func TestDecoderCacheSeesRewrittenCode(t *testing.T) {
	mem := codeMem(t, hexCode(t, "b801000000 c3"))
	d := NewDecoder(mem)
	first, err := d.Decode(testCode)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := d.Decode(testCode); again != first {
		t.Error("unchanged code was decoded again")
	}
	if err := mem.Poke(testCode, hexCode(t, "31c0")); err != nil {
		t.Fatal(err)
	}
	second, err := d.Decode(testCode)
	if err != nil {
		t.Fatal(err)
	}
	if second.Inst.Op != x86asm.XOR || second.Text != "xor eax, eax" {
		t.Errorf("rewritten code decoded as %q", second.Text)
	}
	d.InvalidatePage(testCode)
	if len(d.cache) != 0 {
		t.Errorf("InvalidatePage left %d entries", len(d.cache))
	}
}

func TestDecodeError(t *testing.T) {
	d := NewDecoder(codeMem(t, hexCode(t, "0f38ff")))
	_, err := d.Decode(testCode)
	var de *DecodeError
	if !errors.As(err, &de) || !errors.Is(err, ErrUndecodable) {
		t.Fatalf("Decode of invalid bytes: %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "0x400000") || !strings.Contains(msg, "0f 38 ff") {
		t.Errorf("error %q does not name the address and bytes", msg)
	}
}

func TestHintNops(t *testing.T) {
	for _, c := range []struct{ hex, text string }{
		{"f30f1efa", "endbr64"},
		{"f30f1efb", "endbr32"},
		{"f3480f1ec8", "rdsspq"},
		{"f30f1ec9", "rdsspd"},
	} {
		d := NewDecoder(codeMem(t, hexCode(t, c.hex)))
		got, err := d.Decode(testCode)
		if err != nil {
			t.Fatalf("%s: %v", c.hex, err)
		}
		if got.Text != c.text || got.Inst.Op != x86asm.NOP || got.Inst.Len != len(c.hex)/2 {
			t.Errorf("%s decoded as %q (%v, len %d)", c.hex, got.Text, got.Inst.Op, got.Inst.Len)
		}
	}
}

// TestUnsupportedStopsGuest checks the guest stops with the unsupported
// instruction's address and disassembly.
func TestUnsupportedStopsGuest(t *testing.T) {
	mem := codeMem(t, hexCode(t, "90 0f01d0"))
	it := gvinst.NewInterpreter(mem, NewLifter(mem), gvinst.InterpOptions{})
	cpu := &gvinst.CPU{PC: testCode}
	stop := it.Run(cpu, 100)
	if stop.Kind != gvinst.StopTrap || stop.Trap != gvinst.TrapUnsupported || stop.PC != testCode+1 || stop.Insn != "xgetbv" {
		t.Errorf("stop = %v, want unsupported xgetbv at %#x", stop, testCode+1)
	}
}

// TestVEXIsUnsupported checks AVX encodings are not lifted (CPUID reports
// no AVX).
func TestVEXIsUnsupported(t *testing.T) {
	blk := liftHex(t, "c5f877")
	if in := blk.Insts[0]; in.Op != gvinst.OpTrap || gvinst.TrapKind(in.Mod) != gvinst.TrapUnsupported {
		t.Errorf("vzeroupper lifted as\n%s", gvinst.Print(blk))
	}
}
