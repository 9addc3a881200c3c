package ptxgen

import (
	"math"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// floatMerge is out[i] = x[i] + a in single precision, as x86 computes it
// in xmm2, a copy of xmm0 (a, with other bits above it): movss loads x[i]
// into xmm1, addss merges the sum into xmm2's low 32 bits, keeping the
// rest of xmm0's bits. STORE stores xmm2: movss (its low 32 bits) or movq
// (all 64, the kept upper half included).
const floatMerge = `
vblock 0x3000..0x3020:
  # 0x3000: movss xmm1, dword ptr [rsi+rax*4]
  GET.u64 v0, s0
  GET.u64 v1, s6
  SHL.u64 v2, v0, 2
  ADD.u64 v3, v1, v2
  LD.u32 v4, v3(0)
  LI.u64 v5, 0
  JOIN.b128 v6, v4, v5
  PUT.b128 x1, v6
  # 0x3005: movaps xmm2, xmm0
  GET.b128 v7, x0
  PUT.b128 x2, v7
  # 0x3008: addss xmm2, xmm1
  GET.u64 v8, x2
  GET.u64 v9, x1
  ADD.f32 v10, v8, v9
  AND.b64 v11, v8, -4294967296
  OR.b64 v12, v11, v10
  PUT.u64 x2, v12
STORE
  # 0x3011: add rax, 1
  ADD.u64 v17, v0, 1
  PUT.u64 s0, v17
  # 0x3015: cmp rax, rdx
  GET.u64 v18, s2
  # 0x3018: jne 0x3000
  CMP.ne.u64 v19, v17, v18
  BRANCH v19, 0x3000, 0x3020
vblock 0x3020..0x3022:
  # 0x3020: syscall
  SYSCALL 0x3022
`

const (
	storeLow = `  # 0x300c: movss dword ptr [rdi+rax*4], xmm2
  GET.u64 v13, s7
  SHL.u64 v14, v0, 2
  ADD.u64 v15, v13, v14
  GET.u64 v16, x2
  ST.f32 v15(0), v16
`
	storeAll = `  # 0x300c: movq qword ptr [rdi+rax*8], xmm2
  GET.u64 v13, s7
  SHL.u64 v14, v0, 3
  ADD.u64 v15, v13, v14
  GET.u64 v16, x2
  ST.u64 v15(0), v16
`
)

// TestPlainMerges generates the float merge loop twice: storing xmm2's low
// 32 bits, the kernel need not keep xmm0's upper bits above the sum (its
// merge is a move); storing all 64, it must. Both kernels leave memory as
// the CPU engine does, with xmm0's upper bits set.
func TestPlainMerges(t *testing.T) {
	for _, c := range []struct {
		name, store string
		plain       bool
	}{{"movss", storeLow, true}, {"movq", storeAll, false}} {
		t.Run(c.name, func(t *testing.T) {
			const n = 300
			lc := loopCase{
				name: c.name, src: strings.Replace(floatMerge, "STORE\n", c.store, 1), header: 0x3000, level: []uint64{0x3000}, arrivals: n,
				setup: func(mem *gvinst.Memory, cpu *gvinst.CPU) {
					for i := 0; i < n; i++ {
						_ = mem.Store(dataBase+uint64(4*i), 4, uint64(math.Float32bits(float32(i)*0.37+1/3.0)))
					}
					cpu.State[gvinst.S6] = dataBase
					cpu.State[gvinst.S7] = dataBase + 0x1000
					cpu.State[gvinst.S2] = n
					cpu.State[gvinst.XReg(0)] = 0x9abcdef0<<32 | uint64(math.Float32bits(1.0000001))
				},
				data: Range{dataBase, dataBase + 0x2000},
			}
			k, err := runOnGPU(t, lc, nil)
			if err != nil {
				t.Fatalf("launch: %v\n%s", err, numbered(k.PTX))
			}
			if merged := strings.Contains(k.PTX, "0xFFFFFFFF00000000"); merged == c.plain {
				t.Errorf("the kernel keeps the upper half: %v, want %v\n%s", merged, !c.plain, numbered(k.PTX))
			}
		})
	}
}
