package ptxgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// realBodies reads the kernel bodies in testdata/bodies: the lines six
// real kernels' emitWith handed to optimize (see the README there), by
// file name.
func realBodies(tb testing.TB) map[string]string {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "bodies", "*.ptx"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no kernel bodies in testdata/bodies: %v", err)
	}
	out := map[string]string{}
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(p), ".ptx")] = string(src)
	}
	return out
}

// BenchmarkOptimize measures the peephole pass (optimize, then
// hoistDecls, as emitWith runs them) over real kernel bodies: heat3d's
// 1D kernel, its dry twin (whose dead code takes the most rounds) and
// its 3D kernel, gemm's 2D kernel with its two hoisted and unrolled
// loops and its dry twin, doitgen's 3D kernel. Parsing the bodies is
// left out of the time.
func BenchmarkOptimize(b *testing.B) {
	srcs := realBodies(b)
	for b.Loop() {
		b.StopTimer()
		var bodies [][]*pline
		for _, s := range srcs {
			ls, err := parseBody(s)
			if err != nil {
				b.Fatal(err)
			}
			bodies = append(bodies, ls)
		}
		b.StartTimer()
		for _, ls := range bodies {
			hoistDecls(optimize(ls))
		}
	}
}
