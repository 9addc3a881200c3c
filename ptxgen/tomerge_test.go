package ptxgen

import "testing"

// TestResidentToMerge checks Unheld (the bytes no buffer covers), and
// ToMerge against what launches do: nothing
// for a footprint a buffer holds; the sizes of the buffers a footprint
// overlaps, when the launch merges them (the bytes it copies on the
// device); nothing when the merged buffer would pass the budget.
func TestResidentToMerge(t *testing.T) {
	const n = 1000
	_, k, ctx, fn := saxpyKernel(t)
	mem, cpu := lazyGuest(t, 3*n)
	res := Resident{}
	xr, yr := Range{dataBase, dataBase + 8*n}, Range{dataBase + 0x8000, dataBase + 0x8000 + 8*n}
	if _, err := Launch(ctx, fn, k, mem, saxpyInput(k, cpu, n, xr, yr), &res); err != nil {
		t.Fatal(err)
	}
	if got := res.Unheld(Range{xr.Lo - 64, yr.Hi + 32}); got != 64+(yr.Lo-xr.Hi)+32 {
		t.Errorf("x's and y's buffers and 64 bytes before, 32 after, and between: %d bytes unheld, want %d", got, 64+(yr.Lo-xr.Hi)+32)
	}
	if got := res.ToMerge(Range{xr.Lo + 8, xr.Hi - 8}); got != 0 {
		t.Errorf("a footprint inside x's buffer: %d bytes to merge, want 0", got)
	}
	// x's footprint said to reach into y's: the launch's one group
	// overlaps both buffers.
	in := saxpyInput(k, cpu, n, Range{xr.Lo, yr.Lo + 8}, yr)
	gs := Groups(k, in.Sites)
	if len(gs) != 1 {
		t.Fatalf("%d groups, want x and y in one", len(gs))
	}
	want := xr.Hi - xr.Lo + yr.Hi - yr.Lo
	if got := res.ToMerge(gs[0].Range); got != want {
		t.Errorf("a footprint over x's and y's buffers: %d bytes to merge, want %d", got, want)
	}
	st, err := Launch(ctx, fn, k, mem, in, &res)
	if err != nil {
		t.Fatal(err)
	}
	if st.Parts.BytesDtoD != want {
		t.Errorf("the launch copied %d bytes on the device, ToMerge said %d", st.Parts.BytesDtoD, want)
	}
	if got := res.ToMerge(gs[0].Range); got != 0 {
		t.Errorf("after the merge: %d bytes to merge, want 0", got)
	}
	small := Resident{MaxBytes: 8 * n}
	if _, err := Launch(ctx, fn, k, mem, saxpyInput(k, cpu, n, xr, yr), &small); err != nil {
		t.Fatal(err)
	}
	if got := small.ToMerge(Range{yr.Lo, yr.Hi + 8*n}); got != 0 {
		t.Errorf("a merged buffer past the budget: %d bytes to merge, want 0 (the old buffers are dropped)", got)
	}
	for _, r := range []*Resident{&res, &small} {
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
