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
			f, err := fitAffine(tc.pts, 2, nil)
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
		f, err := fitAffine(pts, 2, nil)
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
	_, err := fitAffine([]point{{"0", []int32{0}, 0}, {"0", []int32{2}, 7}}, 1, nil)
	if err == nil || !strings.Contains(err.Error(), "not a whole step") {
		t.Errorf("got %v", err)
	}
	// A level that varies with no point to fix its step.
	_, err = fitAffine([]point{{"0", []int32{1, 0}, 8}, {"0", []int32{2, 1}, 24}}, 2, nil)
	if err == nil || !strings.Contains(err.Error(), "too few samples") {
		t.Errorf("got %v", err)
	}
	// A point off the plane the others define.
	_, err = fitAffine([]point{{"0", []int32{0, 0}, 0}, {"0", []int32{1, 0}, 8}, {"0", []int32{0, 1}, 100}, {"0", []int32{2, 2}, 217}}, 2, nil)
	if err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Errorf("got %v", err)
	}
}

// TestFitAffineOneOuterValue fits heat3d's write B[i][j][k] as a profile
// that spent its probe budget inside one iteration of i samples it: every
// point at i = 1. Nothing shows i's stride (102400 bytes), so the fit must
// fail on that level rather than claim 0 (which says every plane is the
// same plane), unless the code proves the address cannot move with i.
func TestFitAffineOneOuterValue(t *testing.T) {
	const base = 0x7fff0000
	var pts []point
	for _, key := range []string{"0", "1"} { // two entries of the nest
		for j := int32(0); j < 5; j++ {
			for k := int32(0); k < 5; k++ {
				pts = append(pts, point{key: key, vec: []int32{1, j, k}, val: base + 102400*1 + 640*uint64(j) + 4*uint64(k)})
			}
		}
	}
	f, err := fitAffine(pts, 3, nil)
	if err == nil {
		t.Fatalf("fitted %s with i seen at one value; want the fit to fail on level 0", fmtCoeffs(f.coeffs, nil))
	}
	if !strings.Contains(err.Error(), "level 0 was seen at one value only") {
		t.Errorf("error %q, want it to name level 0 seen at one value", err)
	}
	// Each entry at another single value of i: still nothing pairs two
	// values of i in one entry.
	var apart []point
	for e, key := range []string{"0", "1"} {
		for j := int32(0); j < 3; j++ {
			apart = append(apart, point{key: key, vec: []int32{int32(e + 2), j}, val: base + 102400*uint64(e+2) + 640*uint64(j)})
		}
	}
	if f, err := fitAffine(apart, 2, nil); err == nil {
		t.Errorf("fitted %s from entries at one value of i each; want a failure", fmtCoeffs(f.coeffs, nil))
	}
	// A stack slot whose base register level 0 never writes: 0 is proven.
	var slot []point
	for j := int32(0); j < 3; j++ {
		slot = append(slot, point{key: "0", vec: []int32{1, j}, val: base + 8*uint64(j)})
	}
	f, err = fitAffine(slot, 2, []bool{true, false})
	if err != nil || f.coeffs[0] != 0 || f.coeffs[1] != 8 {
		t.Errorf("fixed level 0: got %v, %v; want coefficients [0 8]", f, err)
	}
	// A level said fixed that the samples show moving: the claim is wrong.
	moving := append(slot, point{key: "0", vec: []int32{0, 0}, val: base - 64})
	if _, err := fitAffine(moving, 2, []bool{true, false}); err == nil || !strings.Contains(err.Error(), "cannot move") {
		t.Errorf("a fixed level that moves: got %v, want an error", err)
	}
}

// TestFitAffineScattered fits a store on one side of an if (ifsides.c's
// a[i][j] = x, which gcc -O2 duplicates into both sides of the if): each
// copy runs at scattered iterations only, so no two of its points differ
// in one level alone with one of them at 0 there. The coefficients still
// follow from the points by elimination, and every point must fit them;
// a level that only ever moves together with another stays unknown.
func TestFitAffineScattered(t *testing.T) {
	var pts []point
	for _, key := range []string{"0", "1"} {
		for i := int32(0); i < 6; i++ {
			for j := int32(0); j < 7; j++ {
				if (i*7+j*3+int32(len(key)))%5 < 2 && i*j != 0 {
					pts = append(pts, point{key: key, vec: []int32{i, j}, val: 0x4000 + uint64(len(key))*0x100 + 400*uint64(i) + 8*uint64(j)})
				}
			}
		}
	}
	f, err := fitAffine(pts, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.coeffs[0] != 400 || f.coeffs[1] != 8 {
		t.Errorf("coefficients %v, want [400 8]", f.coeffs)
	}
	// One point off the plane: the fit fails.
	off := append([]point(nil), pts...)
	off[len(off)/2].val += 8
	if _, err := fitAffine(off, 2, nil); err == nil {
		t.Error("a point off the plane fitted")
	}
	// The diagonal: i and j always move together, so neither step is
	// known (400+8 per step could be any split).
	var diag []point
	for i := int32(1); i < 6; i++ {
		diag = append(diag, point{key: "0", vec: []int32{i, i}, val: 0x4000 + 408*uint64(i)})
	}
	if f, err := fitAffine(diag, 2, nil); err == nil || !strings.Contains(err.Error(), "too few samples") {
		t.Errorf("diagonal: got %v, %v; want too few samples", f, err)
	}
	// A step of a half: no whole number.
	half := []point{{"0", []int32{1, 1}, 0}, {"0", []int32{3, 1}, 1}, {"0", []int32{1, 2}, 8}}
	if _, err := fitAffine(half, 2, nil); err == nil || !strings.Contains(err.Error(), "no whole number") {
		t.Errorf("half step: got %v", err)
	}
}

// TestFitAffineScatteredNeverWrong checks on random sparse samples of
// affine and perturbed data that a fit, when it succeeds, reproduces
// every point, and that on unperturbed data with enough points it finds
// the true coefficients.
func TestFitAffineScatteredNeverWrong(t *testing.T) {
	seed := uint64(7)
	rnd := func(n uint64) uint64 {
		seed = seed*6364136223846793005 + 1442695040888963407
		return (seed >> 33) % n
	}
	for trial := 0; trial < 500; trial++ {
		c := []int64{int64(rnd(64)) - 32, int64(rnd(4096)) - 2048, int64(rnd(16)) - 8}
		base := rnd(1 << 40)
		perturb := trial%2 == 1
		var pts []point
		for n := rnd(12) + 1; n > 0; n-- {
			v := []int32{int32(rnd(9)), int32(rnd(9)), int32(rnd(9))}
			val := base + uint64(c[0]*int64(v[0])+c[1]*int64(v[1])+c[2]*int64(v[2]))
			if perturb && rnd(4) == 0 {
				val += rnd(3)
			}
			pts = append(pts, point{key: "0", vec: v, val: val})
		}
		f, err := fitAffine(pts, 3, nil)
		if err != nil {
			continue
		}
		for _, p := range pts {
			got := f.bases[p.key] + uint64(f.coeffs[0]*int64(p.vec[0])+f.coeffs[1]*int64(p.vec[1])+f.coeffs[2]*int64(p.vec[2]))
			if got != p.val {
				t.Fatalf("trial %d: fit gives %#x at %v, sample is %#x", trial, got, p.vec, p.val)
			}
		}
		if !perturb && (f.coeffs[0] != c[0] || f.coeffs[1] != c[1] || f.coeffs[2] != c[2]) {
			t.Fatalf("trial %d: fitted %v from %d exact points, true %v", trial, f.coeffs, len(pts), c)
		}
	}
}
