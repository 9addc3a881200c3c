package cuda

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gpusim"
)

// BenchmarkModuleLoad measures what the CUDA JIT costs phase 2 per module,
// on the kernels of a real run: GXBIT_PTX_DIR names a directory of them
// (gxbit accelerate --ptx-dir). It skips without that directory or
// without a GPU.
//
//	each/level=L  every kernel a module of its own, as phase 2 loads them,
//	              at JIT optimization level L (default: the driver's, 4)
//	one           all the kernels in one module
//
// The driver's JIT cache (~/.nv/ComputeCache, or CUDA_CACHE_PATH) serves a
// module it compiled before, in this run or an earlier one: run with
// CUDA_CACHE_DISABLE=1 for the compiler's own cost, and without it for
// what a run that repeats another pays. The metric s/module is the load
// time per module.
func BenchmarkModuleLoad(b *testing.B) {
	ptx := readPTXDir(b)
	levels := []int{DefaultJITLevel, 0, 1, 2, 3, 4}
	for _, lv := range levels {
		name := fmt.Sprintf("each/level=%d", lv)
		if lv == DefaultJITLevel {
			name = "each/level=default"
		}
		b.Run(name, func(b *testing.B) { benchLoad(b, NewWith(Options{JITLevel: lv}), ptx) })
	}
	b.Run("one", func(b *testing.B) { benchLoad(b, New(), []string{mergePTX(ptx)}) })
}

// benchLoad loads every module of ptx b.N times into a context of d.
func benchLoad(b *testing.B, d *Driver, ptx []string) {
	if err := d.Init(); err != nil {
		b.Skipf("no CUDA back end here: %v", err)
	}
	ctx, err := d.NewContext(0)
	if err != nil {
		b.Fatal(err)
	}
	defer ctx.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, p := range ptx {
			m, err := ctx.LoadModule(p)
			if err != nil {
				b.Fatal(err)
			}
			if err := m.Unload(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N*len(ptx)), "s/module")
}

// ptxHeader matches a module's header directives, which a merged module
// has once.
var ptxHeader = regexp.MustCompile(`(?m)^\s*\.(version|target|address_size)\b.*$`)

// mergePTX makes one module of several, whose kernels have distinct names:
// the first one's header, then every module's body.
func mergePTX(ptx []string) string {
	var sb strings.Builder
	for _, h := range ptxHeader.FindAllString(ptx[0], -1) {
		sb.WriteString(strings.TrimSpace(h) + "\n")
	}
	for _, p := range ptx {
		sb.WriteString(ptxHeader.ReplaceAllString(p, ""))
		sb.WriteString("\n")
	}
	return sb.String()
}

// TestMergePTX checks BenchmarkModuleLoad's merged module on the
// simulator: one module holding both kernels.
func TestMergePTX(t *testing.T) {
	kernel := func(name string) string {
		return "//\n// test\n//\n.version 8.0\n.target sm_90\n.address_size 64\n\n.visible .entry " + name + "(\n\t.param .u64 p\n)\n{\n\tret;\n}\n"
	}
	merged := mergePTX([]string{kernel("gx_a"), kernel("gx_b")})
	if n := strings.Count(merged, ".version"); n != 1 {
		t.Fatalf("%d .version directives in the merged module:\n%s", n, merged)
	}
	d := gpusim.New(gpusim.Options{})
	if err := d.Init(); err != nil {
		t.Fatal(err)
	}
	ctx, err := d.NewContext(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	m, err := ctx.LoadModule(merged)
	if err != nil {
		t.Fatalf("%v\n%s", err, merged)
	}
	for _, name := range []string{"gx_a", "gx_b"} {
		if _, err := m.Function(name); err != nil {
			t.Error(err)
		}
	}
}
