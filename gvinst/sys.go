package gvinst

import (
	"encoding/binary"
	"fmt"
)

// CPUID describes a plain x86-64 processor, the same on every host, so that
// the guest's libc picks code paths the engine implements:
//
//	leaf 0          max basic leaf 7, vendor "GenuineIntel"
//	leaf 1          family 6 model 0x5e stepping 3 (eax 0x000506e3); ebx: clflush
//	                line 64 bytes, one logical processor; ecx: SSE3 SSSE3 CX16
//	                SSE4.1 SSE4.2 POPCNT; edx: FPU TSC CX8 CMOV MMX FXSR SSE SSE2
//	                (no AVX, OSXSAVE, XSAVE); MMX is reported because glibc's
//	                x86-64 baseline ISA level requires it (compilers emit no
//	                MMX code for x86-64 C)
//	leaf 2          one descriptor byte 0xff: "see leaf 4"
//	leaf 4          deterministic caches, ecx = subleaf: 0 L1d 32 KiB 8-way,
//	                1 L1i 32 KiB 8-way, 2 L2 1 MiB 16-way, 3 L3 8 MiB 16-way,
//	                64-byte lines, one thread and core per cache; 4+ none
//	leaf 7          all zero (no BMI, AVX2, ERMS, FSRM)
//	0x80000000      max extended leaf 0x80000008
//	0x80000001      ecx: LAHF/SAHF; edx: SYSCALL NX LM
//	0x80000002..4   brand string "gxbit virtual x86-64"
//	0x80000005      L1d and L1i: 32 KiB 8-way 64-byte lines
//	0x80000006      L2: 1 MiB 16-way 64-byte lines
//	0x80000008      48 physical and 48 linear address bits
//
// Every other leaf and subleaf reads as zero.
// CPUIDFeaturesEDX is CPUID leaf 1's EDX: FPU TSC CX8 CMOV MMX FXSR SSE
// SSE2. The loader gives the same value to the guest as AT_HWCAP.
const CPUIDFeaturesEDX = 1<<0 | 1<<4 | 1<<8 | 1<<15 | 1<<23 | 1<<24 | 1<<25 | 1<<26

func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32) {
	const (
		ecx1 = 1<<0 | 1<<9 | 1<<13 | 1<<19 | 1<<20 | 1<<23
		edx1 = CPUIDFeaturesEDX
	)
	switch leaf {
	case 0:
		return 7, le32("Genu"), le32("ntel"), le32("ineI")
	case 1:
		return 0x000506e3, 0x00010800, ecx1, edx1
	case 2:
		return 0x0000ff01, 0, 0, 0
	case 4:
		// type, level, ways, sets.
		caches := [...][4]uint32{{1, 1, 8, 64}, {2, 1, 8, 64}, {3, 2, 16, 1024}, {3, 3, 16, 8192}}
		if sub >= uint32(len(caches)) {
			return 0, 0, 0, 0
		}
		c := caches[sub]
		eax = c[0] | c[1]<<5 | 1<<8
		ebx = (c[2]-1)<<22 | 0<<12 | (64 - 1)
		ecx = c[3] - 1
		return eax, ebx, ecx, 0
	case 0x80000000:
		return 0x80000008, 0, 0, 0
	case 0x80000001:
		return 0, 0, 1 << 0, 1<<11 | 1<<20 | 1<<29
	case 0x80000002, 0x80000003, 0x80000004:
		var brand [48]byte
		copy(brand[:], "gxbit virtual x86-64")
		p := brand[(leaf-0x80000002)*16:]
		return binary.LittleEndian.Uint32(p), binary.LittleEndian.Uint32(p[4:]), binary.LittleEndian.Uint32(p[8:]), binary.LittleEndian.Uint32(p[12:])
	case 0x80000005:
		l1 := uint32(32<<24 | 8<<16 | 1<<8 | 64)
		return 0, 0, l1, l1
	case 0x80000006:
		return 0, 0, 1024<<16 | 0x8<<12 | 64, 0
	case 0x80000008:
		return 48 | 48<<8, 0, 0, 0
	}
	return 0, 0, 0, 0
}

func le32(s string) uint32 { return binary.LittleEndian.Uint32([]byte(s)) }

// repString runs REPMOVS, REPSTOS, REPCMPS or REPSCAS to completion or to
// the first fault. s1, s6 and s7 are updated after every element, so a
// fault leaves the state of the element that faulted.
func (it *Interpreter) repString(f *frame, in *Inst) error {
	size := uint64(in.Type.Size())
	m := in.Type.Mask()
	step := size
	if f[RFLAGS]&FlagDF != 0 {
		step = -size
	}
	mem := it.mem
	switch in.Op {
	case OpRepMovs:
		if step == size && size == 1 {
			return it.repMovsForward(f)
		}
		for f[S1] != 0 {
			v, err := mem.Load(f[S6], int(size))
			if err != nil {
				return err
			}
			if err := mem.Store(f[S7], int(size), v); err != nil {
				return err
			}
			f[S6] += step
			f[S7] += step
			f[S1]--
		}
	case OpRepStos:
		v := f[S0] & m
		for f[S1] != 0 {
			if err := mem.Store(f[S7], int(size), v); err != nil {
				return err
			}
			f[S7] += step
			f[S1]--
		}
	case OpRepCmps, OpRepScas:
		want := Cond(in.Mod) == CondE
		for f[S1] != 0 {
			var a uint64
			if in.Op == OpRepCmps {
				v, err := mem.Load(f[S6], int(size))
				if err != nil {
					return err
				}
				a = v
			} else {
				a = f[S0] & m
			}
			b, err := mem.Load(f[S7], int(size))
			if err != nil {
				return err
			}
			if in.Op == OpRepCmps {
				f[S6] += step
			}
			f[S7] += step
			f[S1]--
			f[CCOp], f[CCA], f[CCB], f[CCR], f[CCC] = CCOpValue(FlagsSub, in.Type), a, b, (a-b)&m, a
			if (a == b) != want {
				break
			}
		}
	}
	return nil
}

// repMovsForward copies s1 bytes from [s6] to [s7] upward, a page-bounded
// chunk at a time when source and destination do not overlap within it.
func (it *Interpreter) repMovsForward(f *frame) error {
	var buf [256]byte
	for f[S1] != 0 {
		src, dst := f[S6], f[S7]
		n := f[S1]
		if n > uint64(len(buf)) {
			n = uint64(len(buf))
		}
		// Keep each chunk inside one source and one destination page, and
		// copy a byte at a time when the ranges overlap forward.
		if r := PageSize - src&pageMask; n > r {
			n = r
		}
		if r := PageSize - dst&pageMask; n > r {
			n = r
		}
		if dst > src && dst-src < n {
			n = 1
		}
		if err := it.mem.Read(src, buf[:n]); err != nil {
			return err
		}
		if err := it.mem.Write(dst, buf[:n]); err != nil {
			return err
		}
		f[S6] += n
		f[S7] += n
		f[S1] -= n
	}
	return nil
}

// The FXSAVE area (Intel SDM Vol. 1, 10.5.1, 64-bit format without REX.W):
// FCW at 0, FSW at 2, abridged FTW at 4, FOP at 6, FIP at 8, FDP at 16,
// MXCSR at 24, MXCSR_MASK at 28, ST0…ST7 at 32+16i (10 bytes each), XMM0…
// XMM15 at 160+16i. Bytes 416…511 are not touched. The instruction and data
// pointers are stored as zero.
const (
	fxsaveSize = 512
	mxcsrMask  = 0xffff
	fnenvSize  = 28
)

// fpState runs FXSAVE, FXRSTOR, FNSTENV or FLDENV on the area at addr.
func (it *Interpreter) fpState(f *frame, op Op, addr uint64) error {
	switch op {
	case OpFxsave, OpFxrstor:
		if addr%16 != 0 {
			return &Fault{Addr: addr, Access: map[Op]Access{OpFxsave: AccessWrite, OpFxrstor: AccessRead}[op]}
		}
	}
	switch op {
	case OpFxsave:
		var a [416]byte
		binary.LittleEndian.PutUint16(a[0:], uint16(f[FPCW]))
		binary.LittleEndian.PutUint16(a[2:], uint16(fsw(f)))
		a[4] = ^uint8(f[FPTag])
		binary.LittleEndian.PutUint32(a[24:], uint32(f[MXCSR]))
		binary.LittleEndian.PutUint32(a[28:], mxcsrMask)
		for i := 0; i < 8; i++ {
			r := stPhys(f, i)
			binary.LittleEndian.PutUint64(a[32+16*i:], f[r])
			binary.LittleEndian.PutUint16(a[32+16*i+8:], uint16(f[r+1]))
		}
		for i := 0; i < 16; i++ {
			binary.LittleEndian.PutUint64(a[160+16*i:], f[XReg(i)])
			binary.LittleEndian.PutUint64(a[168+16*i:], f[XReg(i)+1])
		}
		return it.mem.Write(addr, a[:])
	case OpFxrstor:
		var a [416]byte
		if err := it.mem.Read(addr, a[:]); err != nil {
			return err
		}
		mx := binary.LittleEndian.Uint32(a[24:])
		if mx&^mxcsrMask != 0 {
			return fmt.Errorf("fxrstor: reserved MXCSR bits set in %#x (#GP)", mx)
		}
		f[FPCW] = uint64(binary.LittleEndian.Uint16(a[0:]))
		setFSW(f, uint64(binary.LittleEndian.Uint16(a[2:])))
		f[FPTag] = uint64(^a[4])
		f[MXCSR] = uint64(mx)
		for i := 0; i < 8; i++ {
			r := stPhys(f, i)
			f[r] = binary.LittleEndian.Uint64(a[32+16*i:])
			f[r+1] = uint64(binary.LittleEndian.Uint16(a[32+16*i+8:]))
		}
		for i := 0; i < 16; i++ {
			f[XReg(i)] = binary.LittleEndian.Uint64(a[160+16*i:])
			f[XReg(i)+1] = binary.LittleEndian.Uint64(a[168+16*i:])
		}
		return nil
	case OpFnstenv:
		// The 32-bit protected-mode layout (SDM Vol. 1, Figure 8-9): FCW,
		// FSW, FTW (two bits per physical register), FIP, FCS and FOP, FDP,
		// FDS, each in a 32-bit field whose unused high half reads as ones.
		var a [fnenvSize]byte
		binary.LittleEndian.PutUint32(a[0:], 0xffff0000|uint32(f[FPCW]&0xffff))
		binary.LittleEndian.PutUint32(a[4:], 0xffff0000|uint32(fsw(f)))
		binary.LittleEndian.PutUint32(a[8:], 0xffff0000|uint32(fullTag(f)))
		binary.LittleEndian.PutUint32(a[16:], 0)
		binary.LittleEndian.PutUint32(a[24:], 0xffff0000)
		if err := it.mem.Write(addr, a[:]); err != nil {
			return err
		}
		// FNSTENV masks every x87 exception after storing.
		f[FPCW] |= 0x3f
		return nil
	case OpFldenv:
		var a [fnenvSize]byte
		if err := it.mem.Read(addr, a[:]); err != nil {
			return err
		}
		f[FPCW] = uint64(binary.LittleEndian.Uint16(a[0:]))
		setFSW(f, uint64(binary.LittleEndian.Uint16(a[4:])))
		tag := binary.LittleEndian.Uint16(a[8:])
		var empty uint64
		for i := 0; i < 8; i++ {
			if tag>>(2*i)&3 == 3 {
				empty |= 1 << i
			}
		}
		f[FPTag] = empty
		return nil
	}
	return nil
}

// fsw is the x87 status word with TOP in bits 11…13.
func fsw(f *frame) uint64 { return f[FPSW]&^(7<<11)&0xffff | (f[FPTop]&7)<<11 }

// setFSW splits a status word into FPSW and FPTop.
func setFSW(f *frame, w uint64) {
	f[FPTop] = w >> 11 & 7
	f[FPSW] = w &^ (7 << 11) & 0xffff
}

// stPhys is the first slot of the physical register holding ST(i).
func stPhys(f *frame, i int) Reg { return FReg(int(f[FPTop]+uint64(i)) & 7) }

// fullTag computes the x87 tag word: for each physical register, 3 if
// empty, else 1 for zero, 2 for special (NaN, infinity, denormal,
// unnormal), 0 for valid.
func fullTag(f *frame) uint64 {
	var tag uint64
	for i := 0; i < 8; i++ {
		var t uint64
		sig, se := f[FReg(i)], f[FReg(i)+1]
		exp := se & 0x7fff
		switch {
		case f[FPTag]>>i&1 != 0:
			t = 3
		case exp == 0 && sig == 0:
			t = 1
		case exp == 0x7fff || exp == 0 || sig>>63 == 0:
			t = 2
		}
		tag |= t << (2 * i)
	}
	return tag
}
