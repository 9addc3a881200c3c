package ptxgen

import (
	"regexp"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// TestPTXShape checks, asmcheck-style, the instructions that matter in the
// kernels of the hand-written nests: the thread index and its bound check,
// the live-in parameters, exact float rounding without fusion, guarded
// division, footprint checks, and the comments naming x86 addresses.
func TestPTXShape(t *testing.T) {
	for _, c := range []struct {
		name    string
		src     string
		header  uint64
		level   []uint64
		want    []string
		wantNot []string
	}{
		{
			name: "saxpyO2", src: saxpyO2, header: 0x1000, level: []uint64{0x1000},
			want: []string{
				`(?m)^\.visible \.entry gx_1000\(`,
				`mad\.lo\.u32 %w0, %w0, %w1, %w2;\s+cvt\.u64\.u32 %idx, %w0;`,
				`setp\.ge\.u64 %p0, %idx, %t0;\s+@%p0 exit;`, // the paper's bound check
				`\.param \.u64 in_s0,\s+\.param \.u64 step_s0`,
				`mad\.lo\.u64 %r0, %(t1|sx0), %idx, %r0;`, // s0 = entry + step*idx
				`mul\.rn\.f64 %d\d+, %d\d+, %d\d+;`,
				`add\.rn\.f64 %d\d+, %d\d+, %d\d+;`,
				`// x86 0x1000: movsd xmm1, qword ptr \[rsi\+rax\]`,
				// footprint and alignment check of site 0, one branch
				`sub\.u64 (%t\d+), %[rt]\d+, %sl0;\s+setp\.gt\.u64 (%p\d+), %t\d+, %sh0;\s+and\.b64 (%t\d+), %[rt]\d+, 7;\s+setp\.ne\.or\.u64 %p\d+, %t\d+, 0, %p\d+;\s+@%p\d+ bra \$Lck1000_0;`,
				`\$Lck1000_0:\s+mov\.b64 %xa, 4096;\s+setp\.gt\.u64 %p0, %t\d+, %sh0;\s+@%p0 bra \$Lerr1;\s+bra \$Lerr4;`,
				`setp\.ne\.u64 %pbr, %r\d+, %r\d+;`, // CMP fused into the loop's branch
				`@%pbr bra \$Lback;`,
				`ld\.global\.[ub]64 %[rd]\d+, \[%t\d+\];`,
				`st\.global\.u64 \[%t\d+\], %r\d+;`,
				// the back edge checks that the induction variable
				// advanced by one step, then goes to the thread's next
				// iteration, the threads along x further (a run:
				// LaunchPlan.Runs1D), or ends the thread
				`add\.u64 %nx0, %r0, %(t1|sx0);`,
				`\$Lback:\s+mov\.u64 %xa, 4096;\s+setp\.ne\.u64 %p0, %r0, %nx0;\s+@%p0 bra \$Lerr5;\s+ld\.param\.u64 %t0, \[count\];\s+add\.u64 %idx, %idx, %xs;\s+setp\.ge\.u64 %p0, %idx, %t0;\s+@%p0 bra \$Ldone;\s+add\.u64 %r0, %r0, %mv0;`,
			},
			wantNot: []string{`fma`, `mad\.rn`, `\.ftz`, `\.approx`},
		},
		{
			name: "intO0", src: intO0, header: 0x2000, level: []uint64{0x2000, 0x2010, 0x2020, 0x2030, 0x2040},
			want: []string{
				`\.param \.u64 in_s5_m8,`, // the -O0 index i lives in [rbp-8]
				`mad\.lo\.u64 %k\d+, %t1, %idx, %k\d+;`,
				`setp\.eq\.u64 %p\d+, %t\d+, 0;\s+@%p\d+ bra \$Lerr3;`, // x86 #DE on a zero divisor
				`div\.s32 %w\d+, %w\d+, %w\d+;`,                        // 32-bit operands divide in 32 bits
				`rem\.s32 %w\d+, %w\d+, %w\d+;`,
				`sqrt\.rn\.f64`,
				`div\.rn\.f64`,
				`cvt\.rn\.f64\.s64`,
				`cvt\.rzi\.f32\.f32`,
				`selp\.b64 %r\d+, %t\d+, 2147483648, %p\d+;`, // the integer indefinite
				`bra \$Lerr2;`,                               // leaving the loop is an error
				`\$Lx2020:`,                                  // inner loop stays a loop
			},
			wantNot: []string{`fma`, `\.ftz`, `\.approx`, `ld\.global\.u32 %w\d+, \[%r5`, `div\.s64`, `rem\.s64`},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			bs := parseBlocks(t, c.src)
			nest := &Nest{Header: c.header, Blocks: map[uint64]*gvinst.VBlock{}}
			for _, a := range c.level {
				nest.Blocks[a] = bs[a]
			}
			k, err := Generate(nest)
			if err != nil {
				t.Fatal(err)
			}
			checkText(t, k.PTX)
			for _, w := range c.want {
				if !regexp.MustCompile(w).MatchString(k.PTX) {
					t.Errorf("kernel lacks %q", w)
				}
			}
			for _, w := range c.wantNot {
				if regexp.MustCompile(w).MatchString(k.PTX) {
					t.Errorf("kernel has %q", w)
				}
			}
			if t.Failed() {
				t.Logf("%s", numbered(k.PTX))
			}
		})
	}
}

// TestRejects checks that nests the GPU cannot run are refused with a
// reason naming the instruction.
func TestRejects(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`vblock 0x1000..0x1010:
  # 0x1004: call
  CALL 0x3000, 0x1010
vblock 0x1010..0x1012:
  GET.u64 v0, s0
  BRANCH v0, 0x1000, 0x2000
`, "op CALL has no GPU lowering"},
		{`vblock 0x1000..0x1010:
  # 0x1004: fadd
  FGETST.f80 v0, 0
  BRANCH v0, 0x1000, 0x2000
`, "x87"},
		{`vblock 0x1000..0x1010:
  # 0x1008: jl
  GETCC.l v0
  BRANCH v0, 0x1000, 0x2000
`, "flags"},
		{`vblock 0x1000..0x1010:
  # 0x1008: pcmpistrm
  GET.b128 v2, x1
  GET.b128 v4, x2
  GET.b128 v6, x3
  VPCMPSTR.u8 v0, v2, v4, v6, 64
  BRANCH v0, 0x1000, 0x2000
`, "packed SSE op VPCMPSTR"},
		{`vblock 0x1000..0x1010:
  GET.u64 v0, s0
  BRANCH v0, 0x1000, 0x1000
`, "no exit"},
	} {
		bs, err := gvinst.Parse(c.src)
		if err != nil {
			t.Fatal(err)
		}
		n := &Nest{Header: 0x1000, Blocks: map[uint64]*gvinst.VBlock{}}
		for _, b := range bs {
			n.Blocks[b.Addr] = b
		}
		_, err = Generate(n)
		if err == nil || !regexp.MustCompile(regexp.QuoteMeta(c.want)).MatchString(err.Error()) {
			t.Errorf("got %v, want an error about %q", err, c.want)
		}
	}
}
