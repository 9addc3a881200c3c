package gvinst

import "testing"

// TestVRegTable sets, reads and removes virtual registers in the slice of
// a vregTable and past it, in its map.
func TestVRegTable(t *testing.T) {
	var tb vregTable[int]
	regs := []Reg{VReg(0), VReg(3), VReg(200), VReg(maxDenseVRegs - 1), VReg(maxDenseVRegs), VReg(1<<24 - 1)}
	for i, r := range regs {
		if tb.has(r) {
			t.Fatalf("%v in the empty table", r)
		}
		tb.set(r, i+1)
	}
	for i, r := range regs {
		if v, ok := tb.get(r); !ok || v != i+1 {
			t.Errorf("get(%v) = %d, %v; want %d", r, v, ok, i+1)
		}
	}
	if tb.has(VReg(4)) || tb.has(VReg(maxDenseVRegs+1)) {
		t.Error("a register never set is in the table")
	}
	for _, r := range regs[1:] {
		tb.remove(r)
		if tb.has(r) {
			t.Errorf("%v still in the table after remove", r)
		}
	}
	if v, ok := tb.get(VReg(0)); !ok || v != 1 {
		t.Errorf("get(v0) = %d, %v after removing the others", v, ok)
	}
}

// TestVerifyFarVirtualRegisters verifies blocks whose virtual registers
// lie past the dense part of Verify's table: written then read is valid,
// read first is not.
func TestVerifyFarVirtualRegisters(t *testing.T) {
	for _, c := range []struct {
		src string
		ok  bool
	}{
		{"vblock 0x1000..0x1002:\n  # 0x1000: x\n  LI.u64 v16777215, 1\n  PUT.u64 s0, v16777215\n  JMP 0x1002\n", true},
		{"vblock 0x1000..0x1002:\n  # 0x1000: x\n  LI.u64 v16777214, 1\n  PUT.u64 s0, v16777215\n  JMP 0x1002\n", false},
	} {
		bs, err := Parse(c.src)
		if err != nil {
			t.Fatal(err)
		}
		if err := Verify(bs[0]); (err == nil) != c.ok {
			t.Errorf("Verify = %v, want ok %v\n%s", err, c.ok, c.src)
		}
	}
}
