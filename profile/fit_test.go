package profile

import (
	"strings"
	"testing"
)

func TestFitAffine(t *testing.T) {
	grid := func(key string, n0, n1 int32, f func(i, j int32) uint64) []point {
		var pts []point
		for i := int32(0); i < n0; i++ {
			for j := int32(0); j < n1; j++ {
				pts = append(pts, point{key: key, vec: []int32{i, j}, val: f(i, j)})
			}
		}
		return pts
	}
	tests := []struct {
		name   string
		pts    []point
		coeffs []int64
		bases  map[string]uint64
		err    string
	}{
		{"row major", grid("0", 4, 4, func(i, j int32) uint64 { return 0x1000 + uint64(i)*800 + uint64(j)*8 }), []int64{800, 8}, map[string]uint64{"0": 0x1000}, ""},
		{"column walk", grid("0", 3, 5, func(i, j int32) uint64 { return 0x2000 + uint64(j)*1024 }), []int64{0, 1024}, map[string]uint64{"0": 0x2000}, ""},
		{"negative step", grid("0", 3, 3, func(i, j int32) uint64 { return 0x9000 - uint64(j)*4 }), []int64{0, -4}, map[string]uint64{"0": 0x9000}, ""},
		{"bases per entry", append(grid("0", 2, 3, func(i, j int32) uint64 { return 0x100 + uint64(j)*8 }),
			grid("1", 2, 3, func(i, j int32) uint64 { return 0x500 + uint64(j)*8 })...), []int64{0, 8}, map[string]uint64{"0": 0x100, "1": 0x500}, ""},
		{"index array", grid("0", 1, 6, func(i, j int32) uint64 { return 0x100 + uint64((j*5)%6)*8 }), nil, nil, "steps by"},
		{"quadratic", grid("0", 1, 6, func(i, j int32) uint64 { return 0x100 + uint64(j*j)*8 }), nil, nil, "steps by"},
		{"coefficients differ between entries", append(grid("0", 1, 3, func(i, j int32) uint64 { return uint64(j) * 8 }),
			grid("1", 1, 3, func(i, j int32) uint64 { return uint64(j) * 16 })...), nil, nil, "steps by"},
		{"two values at one iteration", []point{{"0", []int32{0, 0}, 1}, {"0", []int32{0, 0}, 2}}, nil, nil, "two values"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := fitAffine(tc.pts, 2)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for l, c := range tc.coeffs {
				if f.coeffs[l] != c {
					t.Errorf("coeff %d = %d, want %d", l, f.coeffs[l], c)
				}
			}
			for k, b := range tc.bases {
				if f.bases[k] != b {
					t.Errorf("base %s = %#x, want %#x", k, f.bases[k], b)
				}
			}
		})
	}
}

// TestFitAffineNeverWrong checks on random affine and perturbed data that
// a fit, when it succeeds, reproduces every point.
func TestFitAffineNeverWrong(t *testing.T) {
	seed := uint64(1)
	rnd := func(n uint64) uint64 {
		seed = seed*6364136223846793005 + 1442695040888963407
		return (seed >> 33) % n
	}
	for trial := 0; trial < 500; trial++ {
		c0, c1, base := int64(rnd(64))-32, int64(rnd(4096))-2048, rnd(1<<40)
		var pts []point
		for i := int32(0); i < int32(rnd(5)+1); i++ {
			for j := int32(0); j < int32(rnd(5)+1); j++ {
				v := base + uint64(c0*int64(i)+c1*int64(j))
				if rnd(20) == 0 {
					v += rnd(3)
				}
				pts = append(pts, point{key: "0", vec: []int32{i, j}, val: v})
			}
		}
		f, err := fitAffine(pts, 2)
		if err != nil {
			continue
		}
		for _, p := range pts {
			got := f.bases[p.key] + uint64(f.coeffs[0]*int64(p.vec[0])+f.coeffs[1]*int64(p.vec[1]))
			if got != p.val {
				t.Fatalf("trial %d: fit gives %#x at %v, sample is %#x", trial, got, p.vec, p.val)
			}
		}
	}
}

func TestFitAffineErrors(t *testing.T) {
	// j*8 + 4 at j = 2 from 0 at j = 0 is no whole step.
	_, err := fitAffine([]point{{"0", []int32{0}, 0}, {"0", []int32{2}, 7}}, 1)
	if err == nil || !strings.Contains(err.Error(), "not a whole step") {
		t.Errorf("got %v", err)
	}
	// A level that varies with no point to fix its step.
	_, err = fitAffine([]point{{"0", []int32{1, 0}, 8}, {"0", []int32{2, 1}, 24}}, 2)
	if err == nil || !strings.Contains(err.Error(), "too few samples") {
		t.Errorf("got %v", err)
	}
	// A point off the plane the others define.
	_, err = fitAffine([]point{{"0", []int32{0, 0}, 0}, {"0", []int32{1, 0}, 8}, {"0", []int32{0, 1}, 100}, {"0", []int32{2, 2}, 217}}, 2)
	if err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Errorf("got %v", err)
	}
}
