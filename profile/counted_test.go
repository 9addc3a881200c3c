package profile

import (
	"math/rand"
	"testing"
)

// TestHeadersBefore checks headersBefore against resumeAt: none of the
// headers it counts may resume the loop, and where the loop resumes at
// its end only (toEnd) and it counts fewer than "never", the header after
// them does: it counts as many as it can.
func TestHeadersBefore(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 20000; i++ {
		info := &loopInfo{}
		switch rng.Intn(3) {
		case 0:
			info.predicted = int64(rng.Intn(5000))
		case 1:
			info.lastTrips = int64(rng.Intn(5000))
		}
		t0 := int32(rng.Intn(5000))
		lead := int32(2 + rng.Intn(300))
		toEnd, waiting := rng.Intn(4) != 0, rng.Intn(3) == 0
		k := headersBefore(info, t0, lead, toEnd, waiting)
		if k < 0 {
			t.Fatalf("headersBefore(%+v, %d, %d, %v, %v) = %d", *info, t0, lead, toEnd, waiting, k)
		}
		// Every header it counts: the iterations t0+1 .. t0+k (checked
		// in full up to a bound, at its ends beyond).
		check := func(j int64) {
			if tj := int64(t0) + j; tj <= 1<<31-1 && resumeAt(info, int32(tj), lead, toEnd, waiting) {
				t.Fatalf("headersBefore(%+v, %d, %d, %v, %v) = %d, but the loop resumes at iteration %d", *info, t0, lead, toEnd, waiting, k, tj)
			}
		}
		for j := int64(1); j <= k && j <= 6000; j++ {
			check(j)
		}
		if k > 6000 {
			check(k)
		}
		never := int64(1<<31-1) - int64(t0) - 1
		if toEnd && k < never && !resumeAt(info, int32(int64(t0)+k+1), lead, toEnd, waiting) {
			t.Fatalf("headersBefore(%+v, %d, %d, %v, %v) = %d, but iteration %d does not resume the loop either", *info, t0, lead, toEnd, waiting, k, int64(t0)+k+1)
		}
	}
}
