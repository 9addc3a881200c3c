package gvinst

import (
	"math"
	"testing"
)

// The benchmark workloads: guest loops written as a lifter writes them
// (every guest register through GET and PUT, flags recorded by FLAGS), over
// two arrays of n quadwords at [s6] and [s7], with the bound in s8.
const (
	benchSetup = `vblock 0x1000..0x1004:
  # 0x1000: xor ecx, ecx
  LI.u64 v0, 0
  PUT.u64 s1, v0
  PUT.u64 s2, v0
  FLAGS.logic.u32 v0, v0, v0, v0
  # 0x1002: jmp 0x1010
  JMP 0x1010
vblock 0x1030..0x1032:
  # 0x1030: syscall
  SYSCALL 0x1032
`
	// dotInt: rdx += [rsi+rcx*8] * [rdi+rcx*8] for rcx < r8.
	benchDotInt = `vblock 0x1010..0x1030:
  # 0x1010: mov rax, qword ptr [rsi+rcx*8]
  GET.u64 v0, s6
  GET.u64 v1, s1
  SHL.u64 v2, v1, 3
  ADD.u64 v3, v0, v2
  LD.u64 v4, v3(0)
  PUT.u64 s0, v4
  # 0x1014: imul rax, qword ptr [rdi+rcx*8]
  GET.u64 v5, s7
  GET.u64 v6, s1
  SHL.u64 v7, v6, 3
  ADD.u64 v8, v5, v7
  LD.u64 v9, v8(0)
  GET.u64 v10, s0
  MUL.u64 v11, v10, v9
  MULHI.s64 v12, v10, v9
  FLAGS.mul.s64 v12, v9, v11, v12
  PUT.u64 s0, v11
  # 0x1019: add rdx, rax
  GET.u64 v13, s2
  GET.u64 v14, s0
  ADD.u64 v15, v13, v14
  FLAGS.add.u64 v13, v14, v15, v13
  PUT.u64 s2, v15
  # 0x101c: add rcx, 1
  GET.u64 v16, s1
  LI.u64 v17, 1
  ADD.u64 v18, v16, v17
  FLAGS.add.u64 v16, v17, v18, v16
  PUT.u64 s1, v18
  # 0x1020: cmp rcx, r8
  GET.u64 v19, s1
  GET.u64 v20, s8
  SUB.u64 v21, v19, v20
  FLAGS.sub.u64 v19, v20, v21, v19
  # 0x1023: jl 0x1010
  GETCC.l v22
  BRANCH v22, 0x1010, 0x1030
`
	// dotF64: xmm1 += [rsi+rcx*8] * [rdi+rcx*8] (movsd, mulsd, addsd).
	benchDotF64 = `vblock 0x1010..0x1030:
  # 0x1010: movsd xmm0, qword ptr [rsi+rcx*8]
  GET.u64 v0, s6
  GET.u64 v1, s1
  SHL.u64 v2, v1, 3
  ADD.u64 v3, v0, v2
  LD.f64 v4, v3(0)
  LI.u64 v5, 0
  JOIN.b128 v6, v4, v5
  PUT.b128 x0, v6
  # 0x1015: mulsd xmm0, qword ptr [rdi+rcx*8]
  GET.u64 v8, s7
  GET.u64 v9, s1
  SHL.u64 v10, v9, 3
  ADD.u64 v11, v8, v10
  LD.f64 v12, v11(0)
  GET.f64 v13, x0
  MUL.f64 v14, v13, v12
  PUT.f64 x0, v14
  # 0x101a: addsd xmm1, xmm0
  GET.f64 v15, x1
  GET.f64 v16, x0
  ADD.f64 v17, v15, v16
  PUT.f64 x1, v17
  # 0x101e: add rcx, 1
  GET.u64 v18, s1
  LI.u64 v19, 1
  ADD.u64 v20, v18, v19
  FLAGS.add.u64 v18, v19, v20, v18
  PUT.u64 s1, v20
  # 0x1022: cmp rcx, r8
  GET.u64 v21, s1
  GET.u64 v22, s8
  SUB.u64 v23, v21, v22
  FLAGS.sub.u64 v21, v22, v23, v21
  # 0x1025: jl 0x1010
  GETCC.l v24
  BRANCH v24, 0x1010, 0x1030
`
)

const benchN = 1024

func newBenchMachine(tb testing.TB, loop string, optimize, noFast bool) (*Interpreter, func() *CPU) {
	mem := NewMemory(0)
	if err := mem.Map(0x1000, PageSize, PermRead|PermExec); err != nil {
		tb.Fatal(err)
	}
	a, b := uint64(0x100000), uint64(0x200000)
	for _, base := range []uint64{a, b} {
		if err := mem.Map(base, 8*benchN, PermRead|PermWrite); err != nil {
			tb.Fatal(err)
		}
	}
	for i := uint64(0); i < benchN; i++ {
		_ = mem.Store(a+8*i, 8, i+1)
		_ = mem.Store(b+8*i, 8, 3*i+2)
		if loop == benchDotF64 {
			_ = mem.Store(a+8*i, 8, math.Float64bits(float64(i)+0.5))
			_ = mem.Store(b+8*i, 8, math.Float64bits(float64(i)*0.25))
		}
	}
	tr := newTextTranslator(tb, mem, benchSetup+loop)
	it := NewInterpreter(mem, tr, InterpOptions{Optimize: optimize})
	it.noFast = noFast
	return it, func() *CPU {
		cpu := &CPU{PC: 0x1000}
		cpu.State[S6], cpu.State[S7], cpu.State[SReg(8)] = a, b, benchN
		cpu.State[MXCSR] = 0x1f80 // the reset value, as a guest starts
		return cpu
	}
}

func BenchmarkInterp(b *testing.B) {
	loops := []struct{ name, src string }{{"dotInt", benchDotInt}, {"dotF64", benchDotF64}}
	for _, l := range loops {
		for _, e := range engines() {
			b.Run(l.name+"/"+e.name, func(b *testing.B) {
				it, mk := newBenchMachine(b, l.src, e.optimize, e.noFast)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					cpu := mk()
					if stop := it.Run(cpu, 0); stop.Kind != StopSyscall {
						b.Fatalf("stop %+v", stop)
					}
				}
				b.StopTimer()
				insns := it.Stats().GuestInsns
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(insns), "ns/insn")
			})
		}
	}
}

// TestBenchLoops checks that the benchmark loops compute what they should,
// on every engine.
func TestBenchLoops(t *testing.T) {
	var wantInt uint64
	var wantF float64
	for i := uint64(0); i < benchN; i++ {
		wantInt += (i + 1) * (3*i + 2)
		wantF = float64(wantF + float64((float64(i)+0.5)*(float64(i)*0.25)))
	}
	for _, e := range engines() {
		it, mk := newBenchMachine(t, benchDotInt, e.optimize, e.noFast)
		cpu := mk()
		if stop := it.Run(cpu, 0); stop.Kind != StopSyscall || cpu.State[S2] != wantInt {
			t.Errorf("%s dotInt: stop %+v, rdx %d want %d", e.name, stop, cpu.State[S2], wantInt)
		}
		if n := it.Stats().GuestInsns; n != 2+6*benchN+1 {
			t.Errorf("%s dotInt: %d guest instructions", e.name, n)
		}
		it, mk = newBenchMachine(t, benchDotF64, e.optimize, e.noFast)
		cpu = mk()
		if stop := it.Run(cpu, 0); stop.Kind != StopSyscall || math.Float64frombits(cpu.State[XReg(1)]) != wantF {
			t.Errorf("%s dotF64: stop %+v, xmm1 %g want %g", e.name, stop, math.Float64frombits(cpu.State[XReg(1)]), wantF)
		}
	}
}

// nativeDotInt is the dotInt loop in Go, for the ratio against native:
// compiled for amd64 it is the same six instructions per iteration (load,
// imul with a memory operand, add, inc, cmp, jl).
//
//go:noinline
func nativeDotInt(a, b []uint64) uint64 {
	var s uint64
	for i := 0; i < len(a) && i < len(b); i++ {
		s += a[i] * b[i]
	}
	return s
}

//go:noinline
func nativeDotF64(a, b []float64) float64 {
	var s float64
	for i := 0; i < len(a) && i < len(b); i++ {
		s += float64(a[i] * b[i])
	}
	return s
}

// BenchmarkNative runs the benchmark loops natively; its ns/insn counts
// the guest instructions the lifted loop executes per iteration (6), so it
// compares directly with BenchmarkInterp.
func BenchmarkNative(b *testing.B) {
	ai, bi := make([]uint64, benchN), make([]uint64, benchN)
	af, bf := make([]float64, benchN), make([]float64, benchN)
	for i := range ai {
		ai[i], bi[i] = uint64(i+1), uint64(3*i+2)
		af[i], bf[i] = float64(i)+0.5, float64(i)*0.25
	}
	var sink uint64
	b.Run("dotInt", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sink += nativeDotInt(ai, bi)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(6*benchN+3)), "ns/insn")
	})
	b.Run("dotF64", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sink += uint64(nativeDotF64(af, bf))
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(6*benchN+3)), "ns/insn")
	})
	if sink == 1 {
		b.Log(sink)
	}
}
