package ptxgen

import (
	"bytes"
	"fmt"
	"math/rand"
	"regexp"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/gvinst"
)

// TestUnalignedVectorAccess runs byte loops of movdqu loads and stores
// (LD.b128/ST.b128 at offsets 0..15, as gcc -O3 makes over uint8_t rows),
// and of movq and movd (an LD.u64/u32 into a JOIN.b128, an ST of a vector's
// low half: the vector loop's 8-byte tail), on gpusim and on the CPU
// engine: the kernel's bytes must be the CPU's, with no alignment error.
func TestUnalignedVectorAccess(t *testing.T) {
	ctx, err := gpusim.New(gpusim.Options{}).NewContext(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	rng := rand.New(rand.NewSource(3))
	const iters = 300 // opIters*48 bytes of input, 16 per iteration
	input := make([]byte, opIters*48)
	rng.Read(input)
	loads := map[string]string{
		"b128": "LD.b128 v0, v42(%d)\n  LD.b128 v2, v42(%d)",
		"u64":  "LD.u64 v10, v42(%d)\n  LI.u64 v11, 0\n  JOIN.b128 v0, v10, v11\n  LD.u64 v12, v42(%d)\n  JOIN.b128 v2, v12, v11",
		"u32":  "LD.u32 v10, v42(%d)\n  LI.u64 v11, 0\n  JOIN.b128 v0, v10, v11\n  LD.u32 v12, v42(%d)\n  JOIN.b128 v2, v12, v11",
	}
	for _, ty := range []string{"b128", "u64", "u32"} {
		for _, off := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {3, 13}, {8, 8}, {15, 7}, {4, 12}, {2, 6}} {
			t.Run(fmt.Sprintf("%s_ld%d_st%d", ty, off[0], off[1]), func(t *testing.T) {
				src := fmt.Sprintf(`
vblock 0x1000..0x1040:
  GET.u64 v40, s0
  GET.u64 v41, s6
  ADD.u64 v42, v41, v40
  `+loads[ty]+`
  VAVG.u8 v6, v0, v2
  GET.u64 v43, s7
  ADD.u64 v44, v43, v40
  ST.`+ty+` v44(%d), v6
  ADD.u64 v45, v40, 16
  PUT.u64 s0, v45
  LI.u64 v46, %d
  CMP.ne.u64 v47, v45, v46
  BRANCH v47, 0x1000, 0x1040
vblock 0x1040..0x1042:
  SYSCALL 0x1042
`, off[0], off[0]+1, off[1], iters*16)
				bs := parseBlocks(t, src)
				k, err := Generate(&Nest{Header: 0x1000, Blocks: map[uint64]*gvinst.VBlock{0x1000: bs[0x1000]}})
				if err != nil {
					t.Fatal(err)
				}
				refMem, refCPU := setupWith(t, input)
				if st := gvinst.NewInterpreter(refMem, bs, gvinst.InterpOptions{}).Run(refCPU, 0); st.Kind != gvinst.StopSyscall {
					t.Fatalf("engine stopped: %v", st)
				}
				mem, _ := setupWith(t, input)
				in := LaunchInput{Count: iters - 1}
				for _, l := range k.LiveIns {
					v := map[gvinst.Reg]uint64{gvinst.S6: dataBase, gvinst.S7: dataBase + 0x20000}[l.Slot]
					step := uint64(0)
					if l.Slot == gvinst.S0 {
						step = 16
					}
					in.Values = append(in.Values, v)
					in.Steps = append(in.Steps, step)
				}
				for range k.Sites {
					in.Sites = append(in.Sites, Range{dataBase, dataBase + 0x40000})
				}
				m, err := ctx.LoadModule(k.PTX)
				if err != nil {
					t.Fatalf("%v\n%s", err, numbered(k.PTX))
				}
				fn, err := m.Function(k.Name)
				if err != nil {
					t.Fatal(err)
				}
				if _, err = Launch(ctx, fn, k, mem, in, nil); err != nil {
					t.Fatalf("%v\n%s", err, numbered(k.PTX))
				}
				n := (iters - 1) * 16
				want, got := make([]byte, n+32), make([]byte, n+32)
				_ = refMem.Read(dataBase+0x20000, want)
				_ = mem.Read(dataBase+0x20000, got)
				// The CPU ran the last iteration too; the kernel did not.
				if !bytes.Equal(want[:n+off[1]], got[:n+off[1]]) {
					for i := range n {
						if want[i] != got[i] {
							t.Fatalf("byte %d: cpu %#x, gpu %#x", i, want[i], got[i])
						}
					}
				}
			})
		}
	}
}

// TestVectorAccessByLanes checks which accesses get the any-address
// sequence (anyAddress): movupd over doubles keeps the plain access (two
// 8-byte words, aligned), movups over floats and movdqu over bytes may be
// at any 4- or 1-byte offset and take the three aligned words.
func TestVectorAccessByLanes(t *testing.T) {
	for op, wantAny := range map[string]bool{"VADD.f64": false, "VADD.u64": false, "VADD.f32": true, "VADD.u8": true, "VADD.u32": true} {
		bs := parseBlocks(t, opLoop(op+" v6, v0, v2"))
		k, err := Generate(&Nest{Header: 0x1000, Blocks: map[uint64]*gvinst.VBlock{0x1000: bs[0x1000]}})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(k.PTX, "shr.b64"); got != wantAny {
			t.Errorf("%s: any-address loads %v, want %v\n%s", op, got, wantAny, numbered(k.PTX))
		}
	}
	// movq xmm, m64 (LD.u64 into a JOIN.b128): any address when the ops
	// that use it work on narrower lanes (two floats: a vector loop's
	// tail), plain when it is a double (movsd).
	anyLoad8 := regexp.MustCompile(`add\.u64 %t\d+, %t\d+, 7;`) // loadAny's last word of 8 bytes
	for op, wantAny := range map[string]bool{"VADD.f32 v6, v20, v2": true, "VADD.u16 v6, v20, v2": true, "ADD.f64 v6, v20, v2": false, "VADD.f64 v6, v20, v2": false, "VADD.u64 v6, v20, v2": false} {
		bs := parseBlocks(t, opLoop("LD.u64 v10, v42(4); LI.u64 v11, 0; JOIN.b128 v20, v10, v11; "+op))
		k, err := Generate(&Nest{Header: 0x1000, Blocks: map[uint64]*gvinst.VBlock{0x1000: bs[0x1000]}})
		if err != nil {
			t.Fatal(err)
		}
		if got := anyLoad8.MatchString(k.PTX); got != wantAny {
			t.Errorf("movq then %s: any-address load %v, want %v\n%s", op, got, wantAny, numbered(k.PTX))
		}
	}
}
