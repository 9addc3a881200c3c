package ptxgen

import (
	"bytes"
	"testing"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/gvinst"
)

// TestOverwritten checks which bytes of a group a launch may leave
// unfilled: only where every site of the group stores, over the longest
// gapless run of the dense sites' footprints.
func TestOverwritten(t *testing.T) {
	k := &Kernel{Sites: []Site{{Store: true, Size: 8}, {Store: true, Size: 8}, {Store: true, Size: 8}, {Size: 8}}}
	for _, c := range []struct {
		name  string
		sites []Range
		dense []bool
		group []int
		want  Range
	}{
		{"one dense store", []Range{{0x1000, 0x2000}}, []bool{true, false, false, false}, []int{0}, Range{0x1000, 0x2000}},
		{"not proved dense", []Range{{0x1000, 0x2000}}, []bool{false, false, false, false}, []int{0}, Range{}},
		{"no proof at all", []Range{{0x1000, 0x2000}}, nil, []int{0}, Range{}},
		{"two that meet", []Range{{0x1000, 0x2000}, {0x2000, 0x2800}}, []bool{true, true, false, false}, []int{0, 1}, Range{0x1000, 0x2800}},
		{"a gap: the longer run", []Range{{0x1000, 0x1100}, {0x1200, 0x2000}}, []bool{true, true, false, false}, []int{0, 1}, Range{0x1200, 0x2000}},
		{"a dense store and a sparse one", []Range{{0x1000, 0x2000}, {0x0f00, 0x2100}}, []bool{true, false, false, false}, []int{0, 1}, Range{0x1000, 0x2000}},
		{"a load in the group", []Range{{0x1000, 0x2000}, {}, {}, {0x1800, 0x1808}}, []bool{true, false, false, false}, []int{0, 3}, Range{}},
	} {
		in := LaunchInput{Sites: make([]Range, len(k.Sites)), Dense: c.dense}
		copy(in.Sites, c.sites)
		if got := Overwritten(k, Group{Sites: c.group}, in); got != c.want {
			t.Errorf("%s: %#x, want %#x", c.name, got, c.want)
		}
	}
}

// flatMemory is guest memory over one slice from base, counting the bytes
// read.
type flatMemory struct {
	base  uint64
	b     []byte
	reads uint64
}

func (m *flatMemory) Read(addr uint64, buf []byte) error {
	m.reads += uint64(len(buf))
	copy(buf, m.b[addr-m.base:])
	return nil
}

func (m *flatMemory) Write(addr uint64, buf []byte) error {
	copy(m.b[addr-m.base:], buf)
	return nil
}

// TestLoadSkipsOverwritten fills a new device buffer around the bytes a
// launch overwrites: the edges are the guest's, the rest is neither read
// from the guest nor copied.
func TestLoadSkipsOverwritten(t *testing.T) {
	ctx, err := gpusim.New(gpusim.Options{}).NewContext(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	const base, n = 0x10000, 3 * gvinst.PageSize
	mem := &flatMemory{base: base, b: make([]byte, n)}
	for i := range mem.b {
		mem.b[i] = byte(i%251 + 1)
	}
	r := Range{base, base + n}
	dev, err := ctx.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	if err := ctx.Memset(dev, 0, n); err != nil {
		t.Fatal(err)
	}
	b := newResBuf(nil, r, dev)
	skip := Range{base + 8, base + n - 16}
	copied, err := b.load(ctx, mem, nil, r, skip)
	if err != nil {
		t.Fatal(err)
	}
	if copied != 24 || mem.reads != 24 {
		t.Errorf("copied %d bytes and read %d, want the 24 outside the overwritten ones", copied, mem.reads)
	}
	got := make([]byte, n)
	if err := ctx.CopyDtoH(got, dev); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		want := mem.b[i]
		if uint64(i) >= skip.Lo-base && uint64(i) < skip.Hi-base {
			want = 0
		}
		if got[i] != want {
			t.Fatalf("device byte %d is %d, want %d", i, got[i], want)
		}
	}
}

// TestBornPagesUnwatched checks a lazy Resident's new buffer whose middle
// pages the launch overwrites: they are neither copied nor watched (an
// array born on the device costs no page marks), the edge pages are
// watched, and a later load that finds them not left on the device (the
// launch did not run) copies them in whole, so that the device holds
// the guest's bytes of them again.
func TestBornPagesUnwatched(t *testing.T) {
	ctx, err := gpusim.New(gpusim.Options{}).NewContext(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	const base, n = 0x10000, 6 * gvinst.PageSize
	mem := gvinst.NewMemory(1 << 24)
	if err := mem.Map(base, n, gvinst.PermRead|gvinst.PermWrite); err != nil {
		t.Fatal(err)
	}
	want := make([]byte, n-100)
	for i := range want {
		want[i] = byte(i%251 + 1)
	}
	if err := mem.Write(base+50, want); err != nil {
		t.Fatal(err)
	}
	res := &Resident{Lazy: true}
	if err := res.bind(ctx, mem); err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	r := Range{base + 50, base + n - 50}
	b, kept, _, err := res.acquire(res.ctx, mem, r)
	if err != nil || !kept {
		t.Fatalf("acquire: kept %v, %v", kept, err)
	}
	skip := Range{base + 100, base + n - 100}
	copied, err := b.load(res.ctx, mem, res, r, skip)
	if err != nil {
		t.Fatal(err)
	}
	if copied != 100 {
		t.Errorf("copied %d bytes, want the 100 outside the overwritten ones", copied)
	}
	for p := uint64(0); p < n/gvinst.PageSize; p++ {
		edge := p == 0 || p == n/gvinst.PageSize-1
		if got := mem.IsWatched(base + p*gvinst.PageSize); got != edge {
			t.Errorf("page %d watched %v, want %v", p, got, edge)
		}
	}
	// Nothing ran: the next load copies the middle pages whole.
	copied, err = b.load(res.ctx, mem, res, r, Range{})
	if err != nil {
		t.Fatal(err)
	}
	if copied < 4*gvinst.PageSize {
		t.Errorf("the second load copied %d bytes, want the four middle pages", copied)
	}
	// (The edge pages' overwritten bytes are the launch's to write, as
	// before: it leaves them stale or the buffer goes.)
	mid := make([]byte, 4*gvinst.PageSize)
	if err := ctx.CopyDtoH(mid, b.dev+gpu.DevicePtr(base+gvinst.PageSize-b.r.Lo)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mid, want[gvinst.PageSize-50:5*gvinst.PageSize-50]) {
		t.Error("the device does not hold the guest's bytes of the middle pages")
	}
	b.pinned = false
}
