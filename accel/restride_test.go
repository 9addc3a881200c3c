package accel_test

import (
	"bytes"
	"context"
	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/pipeline"
	"os/exec"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/profile"
)

// rowsSource updates n rows of m doubles that start s doubles apart: the
// rows are independent when s >= m and overlap (the i loop carries a
// dependence) when s < m.
const rowsSource = `#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
	int n = atoi(argv[1]), m = atoi(argv[2]), s = atoi(argv[3]);
	long len = (long)n * s + m;
	double *a = calloc(len + 8, sizeof *a);
	for (long i = 0; i < len; i++)
		a[i] = i % 7;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < m; j++)
			a[(long)i * s + j] = a[(long)i * s + j] * 0.5 + i;
	double sum = 0;
	for (long i = 0; i < len; i++)
		sum += a[i] * (i % 5 + 1);
	printf("%.17g\n", sum);
	return 0;
}
`

// TestRestride profiles a program with one row stride and accelerates it
// with others: a wider stride keeps the rows disjoint, so the nest is
// offloaded though the profile's induction-variable step differs; a
// narrower one makes the rows overlap, and the guard must send the nest
// to the CPU. Output is always the native one.
func TestRestride(t *testing.T) {
	bin := compileStatic(t, "rows", rowsSource)
	prof := func(args ...string) *profile.File {
		_, f, err := pipeline.Profile(context.Background(), pipeline.Config{Path: bin, Args: append([]string{bin}, args...), Engine: testEngine}, profile.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	f := prof("256", "64", "80")
	drv, err := pipeline.OpenGPU("sim")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s       string
		offload bool
	}{{"80", true}, {"96", true}, {"40", false}} {
		args := []string{"256", "64", c.s}
		native, err := exec.Command(bin, args...).Output()
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		res, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: bin, Args: append([]string{bin}, args...), Stdout: &out, Engine: testEngine}, accel.Options{Profile: f, Driver: drv, AlwaysOffload: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitStatus != 0 || out.String() != string(native) {
			t.Errorf("stride %s: output %q, native %q", c.s, out.String(), native)
		}
		launches, fallbacks := 0, 0
		var overlapped *accel.HotSpotReport
		for i, h := range rep.HotSpots {
			launches += h.Launches
			fallbacks += h.Fallbacks
			if strings.Contains(h.LastFallback, "overlaps the next") {
				overlapped = &rep.HotSpots[i]
			}
		}
		if c.offload && (fallbacks != 0 || launches < 2) {
			t.Errorf("stride %s: the init and row nests should both run on the GPU: %+v", c.s, rep.HotSpots)
		}
		if !c.offload && (overlapped == nil || overlapped.Launches != 0) {
			t.Errorf("stride %s: the rows overlap, yet the row nest was not refused: %+v", c.s, rep.HotSpots)
		}
	}
}

// triangleSource updates row i of n rows, starting s doubles apart, in
// its first i+1 elements (syrk's j <= i): rows are disjoint while s >= n.
const triangleSource = `#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
	int n = atoi(argv[1]), s = atoi(argv[2]);
	long len = (long)n * s + n;
	double *a = calloc(len + 8, sizeof *a);
	for (long i = 0; i < len; i++)
		a[i] = i % 7;
	for (int i = 0; i < n; i++)
		for (int j = 0; j <= i; j++)
			a[(long)i * s + j] = a[(long)i * s + j] * 0.5 + i;
	double sum = 0;
	for (long i = 0; i < len; i++)
		sum += a[i] * (i % 5 + 1);
	printf("%.17g\n", sum);
	return 0;
}
`

// TestRestrideTriangle: a triangular row nest profiled at one size and
// accelerated at another. Each row's window grows by an element, so its
// lowest and highest bytes move by different steps; the guard proves
// the rows disjoint over the whole trip count when the stride leaves room
// for the widest row, and refuses when it does not.
func TestRestrideTriangle(t *testing.T) {
	bin := compileStatic(t, "triangle", triangleSource)
	_, f, err := pipeline.Profile(context.Background(), pipeline.Config{Path: bin, Args: []string{bin, "64", "80"}}, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	drv, err := pipeline.OpenGPU("sim")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		n, s    string
		offload bool
	}{{"300", "320", true}, {"300", "300", true}, {"300", "200", false}} {
		args := []string{c.n, c.s}
		native, err := exec.Command(bin, args...).Output()
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		res, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: bin, Args: append([]string{bin}, args...), Stdout: &out}, accel.Options{Profile: f, Driver: drv, AlwaysOffload: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitStatus != 0 || out.String() != string(native) {
			t.Errorf("n %s stride %s: output %q, native %q", c.n, c.s, out.String(), native)
		}
		var row *accel.HotSpotReport
		for i, h := range rep.HotSpots {
			if strings.Contains(h.LastFallback, "overlaps the next") || h.Launches > 0 && h.Iterations >= 200 {
				row = &rep.HotSpots[i]
			}
		}
		switch {
		case row == nil:
			t.Errorf("n %s stride %s: the row nest neither ran nor was refused for overlap: %+v", c.n, c.s, rep.HotSpots)
		case c.offload && row.Launches == 0:
			t.Errorf("n %s stride %s: the rows are disjoint, yet the row nest did not run on the GPU: %+v", c.n, c.s, *row)
		case !c.offload && row.Launches != 0:
			t.Errorf("n %s stride %s: the rows overlap, yet the row nest ran on the GPU: %+v", c.n, c.s, *row)
		}
	}
}

// symmetricSource fills the upper triangle of an n×n matrix and mirrors
// it, as covariance does (c[i][j] and c[j][i] for j >= i), with the column
// moved off columns to the right: rows and columns meet only on the
// diagonal when off is 0; with off 1, iteration i's column writes
// c[i+1][i+1], which iteration i+1's row writes too.
const symmetricSource = `#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
	int n = atoi(argv[1]), off = atoi(argv[2]);
	double (*c)[n + 1] = calloc((long)(n + 1) * (n + 1), sizeof(double));
	for (int i = 0; i < n; i++)
		for (int j = i; j < n; j++) {
			double v = (double)(i * 3 + j) / (j + 1);
			c[i][j] = v;
			c[j][i + off] = v * 0.5;
		}
	double sum = 0;
	for (long i = 0; i < (long)(n + 1) * (n + 1); i++)
		sum += (&c[0][0])[i] * (i % 5 + 1);
	printf("%.17g\n", sum);
	return 0;
}
`

// TestRestrideTransposed profiles the symmetric fill at one size and
// accelerates it at another: the rows' and columns' windows cross, so
// only the exact test on their lattices (observedDependence) proves the
// iterations of i independent; with the column moved by one, they are
// not, and the nest must stay on the CPU. Output is always the native one.
func TestRestrideTransposed(t *testing.T) {
	bin := compileStatic(t, "symmetric", symmetricSource)
	_, f, err := pipeline.Profile(context.Background(), pipeline.Config{Path: bin, Args: []string{bin, "24", "0"}, Engine: testEngine}, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	drv, err := pipeline.OpenGPU("sim")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		off     string
		offload bool
	}{{"0", true}, {"1", false}} {
		args := []string{"90", c.off}
		native, err := exec.Command(bin, args...).Output()
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		res, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: bin, Args: append([]string{bin}, args...), Stdout: &out, Engine: testEngine}, accel.Options{Profile: f, Driver: drv, AlwaysOffload: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitStatus != 0 || out.String() != string(native) {
			t.Errorf("off %s: output %q, native %q", c.off, out.String(), native)
		}
		var fill *accel.HotSpotReport
		for i, h := range rep.HotSpots {
			if h.Offloadable && strings.HasPrefix(h.Schedule, "grid(i") && h.Launches+h.Fallbacks > 0 && (fill == nil || h.Launches > fill.Launches) {
				fill = &rep.HotSpots[i]
			}
		}
		switch {
		case fill == nil:
			t.Errorf("off %s: no hot spot over i ran: %+v", c.off, rep.HotSpots)
		case c.offload && fill.Launches == 0:
			t.Errorf("off %s: the fill stayed on the CPU (%s)", c.off, fill.LastFallback)
		case !c.offload && fill.Launches != 0:
			t.Errorf("off %s: rows and columns meet, yet the fill launched %d times", c.off, fill.Launches)
		}
	}
}
