package ptxgen

import (
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/gvinst"
)

// TestModule checks that a module of a kernel and its variants states the
// header once and that gpusim finds every kernel in it, and that Module
// refuses what cannot be one module: no kernel, two kernels of one name,
// headers that differ.
func TestModule(t *testing.T) {
	bs := parseBlocks(t, saxpyO2)
	k, err := Generate(&Nest{Header: 0x1000, Blocks: map[uint64]*gvinst.VBlock{0x1000: bs[0x1000]}})
	if err != nil {
		t.Fatal(err)
	}
	if k.Unchecked == nil || k.Dry == nil {
		t.Fatal("saxpy's kernel should have an unchecked and a dry variant")
	}
	text, err := Module(k, k.Unchecked, k.Dry)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{".version", ".target", ".address_size"} {
		if n := strings.Count(text, d); n != 1 {
			t.Errorf("%d %s directives in the module, want 1", n, d)
		}
	}
	ctx, err := gpusim.New(gpusim.Options{}).NewContext(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	m, err := ctx.LoadModule(text)
	if err != nil {
		t.Fatalf("gpusim rejects the module: %v\n%s", err, numbered(text))
	}
	for _, v := range []*Kernel{k, k.Unchecked, k.Dry} {
		if _, err := m.Function(v.Name); err != nil {
			t.Errorf("kernel %s: %v", v.Name, err)
		}
	}
	if one, err := Module(k); err != nil || one != k.PTX {
		t.Errorf("a module of one kernel should be its text (err %v)", err)
	}
	if _, err := Module(); err == nil {
		t.Error("a module of no kernel should fail")
	}
	if _, err := Module(k, k); err == nil || !strings.Contains(err.Error(), "two kernels named") {
		t.Errorf("two kernels of one name: err %v", err)
	}
	other := *k.Unchecked
	other.PTX = strings.Replace(other.PTX, ".target sm_90", ".target sm_80", 1)
	if _, err := Module(k, &other); err == nil || !strings.Contains(err.Error(), "header") {
		t.Errorf("headers that differ: err %v", err)
	}
}
