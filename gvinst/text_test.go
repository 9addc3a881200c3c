package gvinst

import (
	"strings"
	"testing"
)

const sampleBlock = `vblock 0x401000..0x40101c:
  # 0x401000: mov eax, dword ptr [rbp-0x8]
  GET.s64 v6, s5
  LI.s64 v29, -8
  ADD.s64 v29, v6, v29
  LD.s32 v1, v29(0)
  CHKALIGN.b128 v29(-16)
  PUT.u64 s0, v1
  # 0x401003: add eax, 0x64
  ADD.u32 v2, v1, 100
  FLAGS.add.u32 v1, v1, v2, v1
  PUT.u64 s0, v2
  # 0x401006: cvtsi2sd xmm0, eax
  CVT.rn.f64.s32 v3, v2
  LI.f64 v4, 0x3ff0000000000000 // 1
  ADD.f64 v5, v3, v4
  PUT.f64 x0, v5
  GET.b128 v8, x1
  VADD.f32 v10, v8, v8
  PUT.b128 x1, v10
  # 0x40100a: jl 0x401000
  GETCC.l v7
  BRANCH v7, 0x401000, 0x40101c
`

func TestTextRoundTrip(t *testing.T) {
	blocks, err := Parse(sampleBlock)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 1 {
		t.Fatalf("got %d blocks", len(blocks))
	}
	if err := Verify(blocks[0]); err != nil {
		t.Fatal(err)
	}
	if got := Print(blocks[0]); got != sampleBlock {
		t.Errorf("round trip differs:\n%s\nwant:\n%s", got, sampleBlock)
	}
	if n := blocks[0].NumVRegs(); n != 30 {
		t.Errorf("NumVRegs = %d, want 30", n)
	}
}

// TestEveryOpRoundTrips builds one instruction of each op from its table
// entry and checks that printing and parsing it gives it back.
func TestEveryOpRoundTrips(t *testing.T) {
	for _, op := range Ops() {
		info := op.Info()
		in := Inst{Op: op}
		switch info.Types {
		case TInt, TNum, TAny, TVec, TInt64:
			in.Type = U64
		case TFloat:
			in.Type = F64
		case TB128:
			in.Type = B128
		}
		if info.SrcType != TNone {
			in.SrcType = S32
		}
		si, ti := 0, 0
		for _, k := range info.Operands {
			switch k {
			case OpdDst:
				in.Dst = VReg(1)
			case OpdSrc, OpdMem:
				in.Src[si] = VReg(2 + si)
				si++
			case OpdSrcImm:
				in.HasImm, in.Imm = true, 42
				si++
			case OpdImm:
				in.Imm = 3
			case OpdTarget:
				in.Target[ti] = 0x401000 + uint64(ti)
				ti++
			case OpdSite:
				in.Target[0] = 7
			}
		}
		text := FormatInst(&in)
		back, err := ParseInst(text)
		if err != nil {
			t.Errorf("%s: parse %q: %v", info.Name, text, err)
			continue
		}
		if back != in {
			t.Errorf("%s: %q parsed to %+v, want %+v", info.Name, text, back, in)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"vblock 0x10..0x20:\n  FOO.u32 v1, v2\n", "2:3: unknown op \"FOO\""},
		{"vblock 0x10..0x20:\n  ADD.u32 v1, v2\n", "ADD takes 3 operands, found 2"},
		{"vblock 0x10..0x20:\n  CMP.zz.u32 v1, v2, v3\n", "unknown modifier \"zz\""},
		{"vblock 0x10..0x20:\n  ADD.q32 v1, v2, v3\n", "unknown type \"q32\""},
		{"vblock 0x10..0x20:\n  LD.u32 v1, v2\n", "expected an address"},
		{"  ADD.u32 v1, v2, v3\n", "instruction outside a vblock"},
		{"vblock zz\n", "expected ':'"},
	}
	for _, c := range cases {
		_, err := Parse(c.src)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want error containing %q", c.src, err, c.want)
		}
	}
}

func TestVerifyErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"vblock 0x10..0x20:\n  ADD.u32 v1, v2, v3\n  JMP 0x20\n", "v2 read before it is written"},
		{"vblock 0x10..0x20:\n  LI.u32 v1, 3\n", "does not end with a control transfer"},
		{"vblock 0x10..0x20:\n  JMP 0x20\n  JMP 0x20\n", "control transfer before the end"},
		{"vblock 0x10..0x20:\n  SQRT.u32 v1, s0\n  JMP 0x20\n", "type .u32 not allowed for SQRT"},
		{"vblock 0x10..0x20:\n  GET.b128 v1, s0\n  JMP 0x20\n", "needs an xN or frN pair"},
	}
	for _, c := range cases {
		bs, err := Parse(c.src)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.src, err)
		}
		err = Verify(bs[0])
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Verify(%q) = %v, want error containing %q", c.src, err, c.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(sampleBlock)
	f.Add("vblock 0x1..0x2:\n  LD.u8 v1, v0(-1)\n")
	f.Fuzz(func(t *testing.T, s string) {
		blocks, err := Parse(s)
		if err != nil {
			return
		}
		for _, b := range blocks {
			_ = Verify(b)
			text := Print(b)
			again, err := Parse(text)
			if err != nil {
				t.Fatalf("printed text does not parse: %v\n%s", err, text)
			}
			if len(again) != 1 || Print(again[0]) != text {
				t.Fatalf("Print(Parse(Print(b))) != Print(b):\n%s", text)
			}
		}
	})
}
