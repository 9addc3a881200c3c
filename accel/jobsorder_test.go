package accel

import (
	"testing"

	"github.com/gxbit/gxbit/profile"
)

// TestOrderJobs: the background translates in the order of the code,
// but first the nests that hold the block where the guest is (a single
// run's round ended there, and the guest reaches their headers next).
func TestOrderJobs(t *testing.T) {
	nest := func(header uint64, blocks ...uint64) *backgroundJob {
		lv := profile.Level{Header: profile.Hex(header)}
		for _, b := range blocks {
			lv.Blocks = append(lv.Blocks, profile.Hex(b))
		}
		return &backgroundJob{hs: &profile.HotSpot{Entry: profile.Hex(header), Levels: []profile.Level{lv}}}
	}
	order := func(first uint64) []profile.Hex {
		jobs := []*backgroundJob{nest(0x4016f8, 0x4016f8, 0x401710, 0x401720), nest(0x401620, 0x401620, 0x401630), nest(0x401680, 0x401680, 0x401690), nest(0x401700, 0x401700)}
		orderJobs(jobs, first)
		var got []profile.Hex
		for _, j := range jobs {
			got = append(got, j.hs.Entry)
		}
		return got
	}
	for _, c := range []struct {
		first uint64
		want  []profile.Hex
	}{
		{0, []profile.Hex{0x401620, 0x401680, 0x4016f8, 0x401700}},
		{0x401720, []profile.Hex{0x4016f8, 0x401620, 0x401680, 0x401700}}, // an inner block of the product
		{0x401700, []profile.Hex{0x401700, 0x401620, 0x401680, 0x4016f8}},
		{0x401800, []profile.Hex{0x401620, 0x401680, 0x4016f8, 0x401700}}, // in no nest
	} {
		got := order(c.first)
		for i := range c.want {
			if got[i] != c.want[i] {
				t.Errorf("guest at %#x: order %v, want %v", c.first, got, c.want)
				break
			}
		}
	}
}
