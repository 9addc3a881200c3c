package polyhedral

import (
	"errors"
	"testing"
)

func TestTripCountNamed(t *testing.T) {
	n := int64(1_000_000)
	tests := []struct {
		name   string
		levels []Level
		params map[string]int64
		want   int64
	}{
		{"rectangular", []Level{lv(t, "i", "0", "bound0 - 1"), lv(t, "j", "0", "bound1 - 1")},
			map[string]int64{"bound0": n, "bound1": 3000}, n * 3000},
		{"triangular j <= i", []Level{lv(t, "i", "0", "bound0 - 1"), lv(t, "j", "0", "i")},
			map[string]int64{"bound0": n}, n * (n + 1) / 2},
		{"triangular j < i", []Level{lv(t, "i", "0", "bound0 - 1"), lv(t, "j", "0", "i - 1")},
			map[string]int64{"bound0": n}, n * (n - 1) / 2},
		{"triangular j > i", []Level{lv(t, "i", "0", "bound0 - 1"), lv(t, "j", "i + 1", "bound0 - 1")},
			map[string]int64{"bound0": n}, n * (n - 1) / 2},
		{"strided outer", []Level{{Index: "i", Lower: Const(0), Upper: Const(n - 1), Step: 2}, lv(t, "j", "0", "i")},
			map[string]int64{}, (n / 2) * (n / 2)}, // sum over even i of i+1
		{"tetrahedral", []Level{lv(t, "i", "0", "bound0 - 1"), lv(t, "j", "0", "i"), lv(t, "k", "0", "j")},
			map[string]int64{"bound0": 2000}, 2000 * 2001 * 2002 / 6},
		{"empty", []Level{lv(t, "i", "5", "4"), lv(t, "j", "0", "i")}, nil, 0},
		{"partly empty inner", []Level{lv(t, "i", "0", "9"), lv(t, "j", "5", "i")}, nil, 15},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Domain{Levels: tc.levels}.TripCount(tc.params)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("TripCount = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestTripCountErrors(t *testing.T) {
	d := Domain{Levels: []Level{lv(t, "i", "0", "bound0 - 1")}}
	if _, err := d.TripCount(nil); !errors.Is(err, ErrUnbound) {
		t.Errorf("symbolic bound0: %v, want ErrUnbound", err)
	}
	big := Domain{Levels: []Level{lv(t, "i", "0", "4000000"), lv(t, "j", "0", "i"), lv(t, "k", "0", "1")}}
	if _, err := big.TripCount(nil); !errors.Is(err, ErrTooLarge) {
		t.Errorf("4e6 outer iterations to enumerate: %v, want ErrTooLarge", err)
	}
	wide := Domain{Levels: []Level{lv(t, "i", "0", "4000000000"), lv(t, "j", "0", "4000000000"), lv(t, "k", "0", "4000000000")}}
	if _, err := wide.TripCount(nil); !errors.Is(err, ErrOverflow) {
		t.Errorf("(4e9)^3 points: %v, want ErrOverflow", err)
	}
	assumed := Domain{Levels: d.Levels, Assume: []Constraint{GE(Var("bound0"), Const(10))}}
	if got, err := assumed.TripCount(map[string]int64{"bound0": 5}); err != nil || got != 0 {
		t.Errorf("parameters outside Assume: %d, %v; want 0", got, err)
	}
}

func TestFootprintNamed(t *testing.T) {
	base := int64(0x7ffd_1234_0000)
	params := map[string]int64{"bound0": 100, "var0": base}
	tests := []struct {
		name   string
		levels []Level
		addr   string
		want   Range
	}{
		{"row major", []Level{lv(t, "i", "0", "bound0 - 1"), lv(t, "j", "0", "bound0 - 1")},
			"var0 + 800*i + 8*j", Range{base, base + 80000}},
		{"lower triangle", []Level{lv(t, "i", "0", "bound0 - 1"), lv(t, "j", "0", "i")},
			"var0 + 800*i + 8*j", Range{base, base + 800*99 + 8*99 + 8}},
		{"upper triangle, transposed", []Level{lv(t, "i", "0", "bound0 - 1"), lv(t, "j", "i + 1", "bound0 - 1")},
			"var0 + 800*j + 8*i", Range{base + 800, base + 800*99 + 8*98 + 8}},
		{"negative stride", []Level{lv(t, "i", "0", "bound0 - 1")},
			"var0 - 8*i + 4000", Range{base + 4000 - 8*99, base + 4008}},
		{"strided", []Level{{Index: "i", Lower: Const(1), Upper: mustExpr(t, "bound0 - 1"), Step: 4}},
			"var0 + 8*i", Range{base + 8, base + 8*97 + 8}},
		{"empty", []Level{lv(t, "i", "bound0", "bound0 - 1")}, "var0 + 8*i", Range{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Footprint(Domain{Levels: tc.levels}, acc(t, "x", "r", tc.addr), params)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Footprint = %v, want %v", got, tc.want)
			}
		})
	}
	if _, err := Footprint(Domain{Levels: tests[0].levels}, acc(t, "x", "r", "var0 + var1 + 8*i"), params); !errors.Is(err, ErrUnbound) {
		t.Errorf("unbound var1: %v, want ErrUnbound", err)
	}
}

func TestRangeOverlaps(t *testing.T) {
	tests := []struct {
		a, b Range
		want bool
	}{
		{Range{0, 8}, Range{8, 16}, false},
		{Range{0, 9}, Range{8, 16}, true},
		{Range{8, 16}, Range{0, 9}, true},
		{Range{0, 100}, Range{10, 20}, true},
		{Range{5, 5}, Range{0, 10}, false},
		{Range{0, 10}, Range{7, 3}, false},
	}
	for _, tc := range tests {
		if got := tc.a.Overlaps(tc.b); got != tc.want {
			t.Errorf("%v.Overlaps(%v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestWitnessString(t *testing.T) {
	w := Witness{A: []int64{1, 2}, B: []int64{1, 3}, Params: map[string]int64{"var0": 0, "bound0": 4}}
	if got, want := w.String(), "(1, 2) and (1, 3) with var0=0, bound0=4"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if got, want := w.format([]string{"i", "j"}), "(i=1, j=2) and (i=1, j=3) with var0=0, bound0=4"; got != want {
		t.Errorf("format = %q, want %q", got, want)
	}
}
