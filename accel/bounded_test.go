package accel

import (
	"math/rand"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// TestExtendMatchesWholeRecord checks bounded probing's model against
// recording every iteration: random accesses that touch, in iteration t,
// a few spans moved by shift·t (a strided or contiguous row, a fixed
// element, a column) are recorded for boundedIterations iterations and
// extended over n; the result must be exactly the span list that
// recording all n iterations gives (or, past maxSpans, its window).
func TestExtendMatchesWholeRecord(t *testing.T) {
	rng := rand.New(rand.NewSource(10))
	for c := 0; c < 3000; c++ {
		base := uint64(1<<20 + rng.Intn(1<<16)*8)
		size := uint64(1 << rng.Intn(4))
		var offs []uint64
		for k := rng.Intn(3) + 1; k > 0; k-- {
			offs = append(offs, uint64(rng.Intn(64))*size)
		}
		shift := int64(rng.Intn(5)-2) * int64(size) * int64(1+rng.Intn(3)*rng.Intn(60))
		n := uint64(boundedIterations + 1 + rng.Intn(900))
		iteration := func(l *spanList, it uint64) {
			for _, o := range offs {
				a := base + o + uint64(shift*int64(it))
				l.add(a, a+size)
			}
		}
		var whole spanList
		its := make([]spanList, boundedIterations)
		for it := uint64(0); it < n; it++ {
			iteration(&whole, it)
			if it < boundedIterations {
				iteration(&its[it], it)
			}
		}
		for i := range its {
			its[i].normalize()
		}
		var got spanList
		err := extend(&got, its, 0, n)
		if wraps := shift < 0 && uint64(-shift)*(n-1) > base; wraps {
			// Below address 0: the model must refuse it.
			if err == nil {
				t.Fatalf("case %d (offsets %v, shift %d, n %d): extended below address 0 to %+v", c, offs, shift, n, got.window)
			}
			continue
		}
		if err != nil {
			t.Fatalf("case %d: %v", c, err)
		}
		got.normalize()
		whole.normalize()
		if got.window != whole.window {
			t.Fatalf("case %d (offsets %v, shift %d, n %d): window %+v, recording all gives %+v", c, offs, shift, n, got.window, whole.window)
		}
		if got.overflow || whole.overflow {
			continue // past maxSpans both keep the window only
		}
		if len(got.spans) != len(whole.spans) {
			t.Fatalf("case %d (offsets %v, shift %d, n %d): %d spans, recording all gives %d", c, offs, shift, n, len(got.spans), len(whole.spans))
		}
		for i := range got.spans {
			if got.spans[i] != whole.spans[i] {
				t.Fatalf("case %d: span %d is %+v, recording all gives %+v", c, i, got.spans[i], whole.spans[i])
			}
		}
	}
}

// TestExtendWindow checks a triangular access (its window's end moves by
// an element per iteration, its start stays): the extension is the
// window over all n iterations, and keeps the window only.
func TestExtendWindow(t *testing.T) {
	const n = 50
	its := make([]spanList, boundedIterations)
	var whole spanList
	for it := uint64(0); it < n; it++ {
		for j := uint64(0); j <= it; j++ {
			a := 4096 + j*8
			whole.add(a, a+8)
			if it < boundedIterations {
				its[it].add(a, a+8)
			}
		}
	}
	var got spanList
	if err := extend(&got, its, 0, n); err != nil {
		t.Fatal(err)
	}
	if got.window != whole.window || !got.overflow {
		t.Fatalf("window %+v (window only %v), recording all gives %+v", got.window, got.overflow, whole.window)
	}
}

// TestExtendRefusesIrregular checks that an access the recorded
// iterations do not fit (seen in some iterations only; bytes not moving
// affinely) stops a skip: fits is false, and extend fails.
func TestExtendRefusesIrregular(t *testing.T) {
	partial := make([]spanList, boundedIterations)
	partial[0].add(100, 108)
	partial[2].add(116, 124)
	irregular := make([]spanList, boundedIterations)
	for it, a := range []uint64{100, 108, 132, 140} {
		irregular[it].add(a, a+8)
	}
	for name, its := range map[string][]spanList{"partial": partial, "irregular": irregular} {
		if _, ok := extension(its, 0); ok {
			t.Errorf("%s: classified as extendable", name)
		}
		var dst spanList
		if err := extend(&dst, its, 0, 10); err == nil {
			t.Errorf("%s: extended to %+v", name, dst)
		}
	}
	// A watch's channel may hold its first two inner iterations only.
	early := make([]spanList, boundedIterations)
	early[1].add(100, 108)
	if k, ok := extension(early, 1); !ok || k != extendEarly {
		t.Errorf("a watch's second iteration only: %v %v", k, ok)
	}
}

// TestCount checks the iteration count of a skipped instance: registers
// that moved by a constant step at the recorded arrivals and moved a
// whole number of steps by the exit count it; one that only looked like a
// counter over the prefix (a remainder) does not; where the recorded
// iterations ran the same instructions each, the skipped ones' give the
// count, the last one possibly shorter (it leaves before a block of
// moves on the way back), and a register must agree, or else be the one
// the exit test compares.
func TestCount(t *testing.T) {
	const n, per = 37, 12
	f := &loopFrame{}
	for a := 0; a <= boundedIterations; a++ {
		var r [16]uint64
		r[0] = uint64(a)               // the counter
		r[1] = 0x1000 + uint64(a)*8    // a pointer
		r[2] = uint64(a+1) % 17        // a remainder: affine over the prefix only
		r[3] = 0xffff_fff0 + uint64(a) // a 32-bit counter about to wrap
		r[3] &= 0xffff_ffff
		f.regs = append(f.regs, r)
		f.insns = append(f.insns, uint64(a)*per)
	}
	var cpu gvinst.CPU
	cpu.State[gvinst.S0] = n
	cpu.State[gvinst.S0+1] = 0x1000 + n*8
	cpu.State[gvinst.S0+2] = (n + 1) % 17
	cpu.State[gvinst.S0+3] = (0xffff_fff0 + n) & 0xffff_ffff
	ran := uint64(n-boundedIterations)*per - 2
	if got, err := f.count(&cpu, ran); err != nil || got != n {
		t.Fatalf("count %d, %v; want %d", got, err, n)
	}
	// Instructions that say another count than every register: refused,
	// unless the registers agree and the exit test compares one of them
	// (the skipped iterations took another path through the body).
	if got, err := f.count(&cpu, ran+5*per); err == nil {
		t.Fatalf("count %d with the instructions of %d more iterations", got, 5)
	}
	f.loop = &innerLoop{}
	f.loop.exitRegs[1] = true
	if got, err := f.count(&cpu, ran+5*per); err != nil || got != n {
		t.Fatalf("another path, the exit test's register counting: count %d, %v; want %d", got, err, n)
	}
	f.loop = nil
	// Uneven iterations: the registers must agree; the remainder does
	// not count (not a whole number of its steps... or it is: then they
	// disagree and the count is refused).
	f.insns[2]++
	if got, err := f.count(&cpu, ran); err != nil || got != n {
		t.Fatalf("uneven: count %d, %v; want %d", got, err, n)
	}
	cpu.State[gvinst.S0+1] += 8
	if got, err := f.count(&cpu, ran); err == nil {
		t.Fatalf("uneven, registers disagreeing: count %d", got)
	}
}
