package gvinst

import (
	"encoding/binary"
	"strings"
	"testing"
)

func fill(t *testing.T, m *machine, addr uint64, data []byte) {
	t.Helper()
	if err := m.mem.Write(addr, data); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, m *machine, addr uint64, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if err := m.mem.Read(addr, b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRepString(t *testing.T) {
	type regs struct{ s0, s1, s6, s7, df uint64 }
	cases := []struct {
		name   string
		inst   string
		in     regs
		setup  string // bytes at dataBase
		want   regs
		mem    string // bytes at dataBase afterwards (prefix)
		zf, cf int    // flags afterwards (-1: not checked)
	}{
		{"movsb forward overlapping", "REPMOVS.u8", regs{0, 5, dataBase, dataBase + 1, 0}, "abcdefgh",
			regs{0, 0, dataBase + 5, dataBase + 6, 0}, "aaaaaagh", -1, -1},
		{"movsb forward", "REPMOVS.u8", regs{0, 3, dataBase, dataBase + 4, 0}, "abc.....",
			regs{0, 0, dataBase + 3, dataBase + 7, 0}, "abc.abc.", -1, -1},
		{"movsd backward", "REPMOVS.u32", regs{0, 2, dataBase + 4, dataBase + 8, 1}, "AAAABBBBCCCC",
			regs{0, 0, dataBase - 4, dataBase, 1}, "AAAAAAAABBBB", -1, -1},
		{"stosq forward", "REPSTOS.u64", regs{0x3131313131313131, 2, 0, dataBase, 0}, "................",
			regs{0x3131313131313131, 0, 0, dataBase + 16, 0}, "1111111111111111", -1, -1},
		{"stosw backward", "REPSTOS.u16", regs{0x3332, 2, 0, dataBase + 2, 1}, "......",
			regs{0x3332, 0, 0, dataBase - 2, 1}, "2323..", -1, -1},
		{"stos zero count", "REPSTOS.u8", regs{0x41, 0, 0, dataBase, 0}, "..",
			regs{0x41, 0, 0, dataBase, 0}, "..", -1, -1},
		{"repe cmpsb mismatch", "REPCMPS.e.u8", regs{0, 8, dataBase, dataBase + 8, 0}, "abcXefghabcdefgh",
			regs{0, 4, dataBase + 4, dataBase + 12, 0}, "abcX", 0, 1},
		{"repe cmpsb equal", "REPCMPS.e.u8", regs{0, 3, dataBase, dataBase + 8, 0}, "abc.....abc",
			regs{0, 0, dataBase + 3, dataBase + 11, 0}, "abc", 1, 0},
		{"repne scasb strlen", "REPSCAS.ne.u8", regs{0, ^uint64(0), 0, dataBase, 0}, "hello\x00",
			regs{0, ^uint64(0) - 6, 0, dataBase + 6, 0}, "hello", 1, 0},
		{"repne scasb backward", "REPSCAS.ne.u8", regs{'h', 10, 0, dataBase + 4, 1}, "hello",
			regs{'h', 5, 0, dataBase - 1, 1}, "hello", 1, 0},
		{"repe scasd below", "REPSCAS.e.u32", regs{1, 4, 0, dataBase, 0}, "\x01\x00\x00\x00\x05\x00\x00\x00",
			regs{1, 2, 0, dataBase + 8, 0}, "", 0, 1},
	}
	for _, c := range cases {
		body := li("v0", c.in.s0) + "  PUT.u64 s0, v0\n" + li("v1", c.in.s1) + "  PUT.u64 s1, v1\n" +
			li("v2", c.in.s6) + "  PUT.u64 s6, v2\n" + li("v3", c.in.s7) + "  PUT.u64 s7, v3\n" +
			li("v4", c.in.df<<10) + "  SETFLAGS v4\n" + "  " + c.inst + "\n  GETFLAGS v5\n  PUT.u64 s8, v5\n"
		for _, e := range allEngines() {
			m := newMachine(t, e, body)
			fill(t, m, dataBase, []byte(c.setup))
			m.mustSyscall(t)
			s := m.cpu.State
			got := regs{s[S0], s[S1], s[S6], s[S7], s[RFLAGS] >> 10 & 1}
			if c.inst[:6] == "REPSTO" || c.inst[:6] == "REPSCA" {
				got.s6 = 0
			}
			if got != c.want {
				t.Errorf("%s %s: regs %+v, want %+v", e.name, c.name, got, c.want)
			}
			if mem := string(read(t, m, dataBase, len(c.mem))); mem != c.mem {
				t.Errorf("%s %s: memory %q, want %q", e.name, c.name, mem, c.mem)
			}
			fl := s[SReg(8)]
			if c.zf >= 0 && (fl&FlagZF != 0) != (c.zf == 1) || c.cf >= 0 && (fl&FlagCF != 0) != (c.cf == 1) {
				t.Errorf("%s %s: flags %#x, want ZF=%d CF=%d", e.name, c.name, fl, c.zf, c.cf)
			}
		}
	}
}

// TestRepFaultMidway: a fault in the middle of a rep loop stops with the
// elements before it done and s1/s7 describing the rest.
func TestRepFaultMidway(t *testing.T) {
	end := uint64(dataBase + dataPages*PageSize)
	body := li("v0", 0x41) + "  PUT.u64 s0, v0\n" + li("v1", 10) + "  PUT.u64 s1, v1\n" + li("v3", end-4) + "  PUT.u64 s7, v3\n  REPSTOS.u16\n"
	for _, e := range allEngines() {
		m := newMachine(t, e, body)
		stop := m.run(t)
		if stop.Kind != StopTrap || stop.Trap != TrapSegv || stop.FaultAddr != end {
			t.Fatalf("%s: stop %+v", e.name, stop)
		}
		if m.cpu.State[S1] != 8 || m.cpu.State[S7] != end {
			t.Errorf("%s: s1 = %d s7 = %#x, want 8 and %#x", e.name, m.cpu.State[S1], m.cpu.State[S7], end)
		}
		if got := string(read(t, m, end-4, 4)); got != "A\x00A\x00" {
			t.Errorf("%s: memory %q", e.name, got)
		}
	}
}

func TestCPUID(t *testing.T) {
	get := func(leaf, sub uint32) [4]uint32 {
		m := newMachine(t, engineConfig{name: "fast"}, li("v0", uint64(leaf))+"  PUT.u64 s0, v0\n"+li("v1", uint64(sub))+"  PUT.u64 s1, v1\n  CPUID\n")
		m.mustSyscall(t)
		s := m.cpu.State
		return [4]uint32{uint32(s[S0]), uint32(s[S3]), uint32(s[S1]), uint32(s[S2])} // eax ebx ecx edx
	}
	l0 := get(0, 0)
	var vendor [12]byte
	binary.LittleEndian.PutUint32(vendor[0:], l0[1])
	binary.LittleEndian.PutUint32(vendor[4:], l0[3])
	binary.LittleEndian.PutUint32(vendor[8:], l0[2])
	if string(vendor[:]) != "GenuineIntel" || l0[0] < 4 {
		t.Errorf("leaf 0: vendor %q max %d", vendor, l0[0])
	}
	l1 := get(1, 0)
	if fam := l1[0] >> 8 & 0xf; fam != 6 {
		t.Errorf("family %d", fam)
	}
	for _, bit := range []uint{0, 9, 13, 19, 20, 23} {
		if l1[2]>>bit&1 == 0 {
			t.Errorf("leaf 1 ecx bit %d missing", bit)
		}
	}
	for _, bit := range []uint{26, 27, 28} { // XSAVE OSXSAVE AVX
		if l1[2]>>bit&1 != 0 {
			t.Errorf("leaf 1 ecx bit %d set", bit)
		}
	}
	for _, bit := range []uint{0, 4, 8, 15, 24, 25, 26} {
		if l1[3]>>bit&1 == 0 {
			t.Errorf("leaf 1 edx bit %d missing", bit)
		}
	}
	if l7 := get(7, 0); l7 != [4]uint32{} {
		t.Errorf("leaf 7 = %#x, want no extended features", l7)
	}
	// Leaf 4: sizes from ways × partitions × line × sets.
	wantSizes := []int{32 << 10, 32 << 10, 1 << 20, 8 << 20}
	for sub, want := range wantSizes {
		r := get(4, uint32(sub))
		size := int(r[1]>>22+1) * int(r[1]>>12&0x3ff+1) * int(r[1]&0xfff+1) * int(r[2]+1)
		if size != want || r[0]&0x1f == 0 {
			t.Errorf("leaf 4.%d: size %d type %d, want %d", sub, size, r[0]&0x1f, want)
		}
	}
	if r := get(4, 4); r[0]&0x1f != 0 {
		t.Errorf("leaf 4.4 not the end of the list: %#x", r)
	}
	e1 := get(0x80000001, 0)
	if e1[2]&1 == 0 || e1[3]>>11&1 == 0 || e1[3]>>20&1 == 0 || e1[3]>>29&1 == 0 {
		t.Errorf("0x80000001 = %#x", e1)
	}
	var brand []byte
	for leaf := uint32(0x80000002); leaf <= 0x80000004; leaf++ {
		r := get(leaf, 0)
		for _, v := range []uint32{r[0], r[1], r[2], r[3]} {
			brand = binary.LittleEndian.AppendUint32(brand, v)
		}
	}
	if got := strings.TrimRight(string(brand), "\x00"); got != "gxbit virtual x86-64" {
		t.Errorf("brand %q", got)
	}
	if r := get(0x80000006, 0); r[2]>>16 != 1024 || r[2]&0xff != 64 {
		t.Errorf("0x80000006 ecx = %#x", r[2])
	}
}

func TestRDTSCIncreases(t *testing.T) {
	for _, e := range allEngines() {
		m := newMachine(t, e, "  RDTSC v0\n  PUT.u64 s0, v0\n  RDTSC v1\n  PUT.u64 s1, v1\n")
		m.mustSyscall(t)
		a, b := m.cpu.State[S0], m.cpu.State[S1]
		m.cpu.PC = 0x1000
		m.mustSyscall(t)
		if !(a < b && b < m.cpu.State[S0]) {
			t.Errorf("%s: rdtsc %d %d then %d", e.name, a, b, m.cpu.State[S0])
		}
	}
}

func TestFXSaveRestore(t *testing.T) {
	body := li("v0", dataBase) + "  FXSAVE v0(0)\n"
	m := newMachine(t, engineConfig{name: "fast"}, body)
	s := &m.cpu.State
	s[FPCW], s[FPSW], s[FPTop], s[FPTag], s[MXCSR] = 0x37f, 0x4100, 6, 0x3f, 0x1fa0
	for i := 0; i < 8; i++ {
		s[FReg(i)] = 0x8000000000000000 | uint64(i)
		s[FReg(i)+1] = 0x3fff + uint64(i)
	}
	for i := 0; i < 16; i++ {
		s[XReg(i)], s[XReg(i)+1] = uint64(i), uint64(i)<<32
	}
	fill(t, m, dataBase+416, []byte("keep"))
	m.mustSyscall(t)
	a := read(t, m, dataBase, 512)
	u16 := func(o int) uint64 { return uint64(binary.LittleEndian.Uint16(a[o:])) }
	u64 := func(o int) uint64 { return binary.LittleEndian.Uint64(a[o:]) }
	if u16(0) != 0x37f || u16(2) != 0x4100|6<<11 || a[4] != 0xc0 || binary.LittleEndian.Uint32(a[24:]) != 0x1fa0 {
		t.Errorf("header % x", a[:32])
	}
	// ST(0) is physical register TOP = 6.
	if u64(32) != 0x8000000000000006 || u16(40) != 0x3fff+6 || u64(32+16*2) != 0x8000000000000000 {
		t.Errorf("ST registers % x", a[32:80])
	}
	if u64(160+16*3) != 3 || u64(168+16*3) != 3<<32 {
		t.Errorf("xmm3 % x", a[160+48:160+64])
	}
	if string(a[416:420]) != "keep" {
		t.Errorf("fxsave wrote the reserved area")
	}
	// FXRSTOR into a cleared state gives the same state back.
	m2 := newMachine(t, engineConfig{name: "fast"}, li("v0", dataBase)+"  FXRSTOR v0(0)\n")
	fill(t, m2, dataBase, a)
	m2.mustSyscall(t)
	for r := FPCW; r < NumGuestSlots; r++ {
		if m2.cpu.State[r] != s[r] {
			t.Errorf("fxrstor: slot %d = %#x, want %#x", r, m2.cpu.State[r], s[r])
		}
	}
	for i := 0; i < 32; i++ {
		if m2.cpu.State[X0+Reg(i)] != s[X0+Reg(i)] {
			t.Errorf("fxrstor: xmm slot %d", i)
		}
	}
	// Misaligned FXSAVE faults.
	m3 := newMachine(t, engineConfig{name: "fast"}, li("v0", dataBase+8)+"  FXSAVE v0(0)\n")
	if stop := m3.run(t); stop.Kind != StopTrap || stop.Trap != TrapSegv {
		t.Errorf("misaligned fxsave: %v", stop)
	}
}

func TestFnstenvFldenv(t *testing.T) {
	m := newMachine(t, engineConfig{name: "fast"}, li("v0", dataBase)+"  FNSTENV v0(0)\n")
	s := &m.cpu.State
	s[FPCW], s[FPSW], s[FPTop], s[FPTag] = 0x37a, 0x0100, 7, 0x7f
	s[FReg(7)], s[FReg(7)+1] = 0, 0 // ST(0) = +0: tag "zero"
	m.mustSyscall(t)
	a := read(t, m, dataBase, 28)
	if got := binary.LittleEndian.Uint32(a[0:]); got != 0xffff037a {
		t.Errorf("fcw field %#x", got)
	}
	if got := binary.LittleEndian.Uint16(a[4:]); got != 0x0100|7<<11 {
		t.Errorf("fsw %#x", got)
	}
	if got := binary.LittleEndian.Uint16(a[8:]); got != 0x7fff {
		t.Errorf("tag word %#x, want 0x7fff (regs 0-6 empty, 7 zero)", got)
	}
	if s[FPCW] != 0x37f {
		t.Errorf("fnstenv did not mask exceptions: fpcw %#x", s[FPCW])
	}
	binary.LittleEndian.PutUint16(a[0:], 0x27f)
	binary.LittleEndian.PutUint16(a[4:], 3<<11|0x4000)
	binary.LittleEndian.PutUint16(a[8:], 0xfff0)
	m2 := newMachine(t, engineConfig{name: "fast"}, li("v0", dataBase)+"  FLDENV v0(0)\n")
	fill(t, m2, dataBase, a)
	m2.mustSyscall(t)
	s2 := m2.cpu.State
	if s2[FPCW] != 0x27f || s2[FPTop] != 3 || s2[FPSW] != 0x4000 || s2[FPTag] != 0xfc {
		t.Errorf("fldenv: fpcw %#x top %d fpsw %#x tag %#x", s2[FPCW], s2[FPTop], s2[FPSW], s2[FPTag])
	}
}
