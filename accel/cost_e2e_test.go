package accel_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gxbit/gxbit/accel"
	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gpusim"
	"github.com/gxbit/gxbit/pipeline"
	"github.com/gxbit/gxbit/profile"
)

// slowDriver is gpusim with every kernel launch delayed: a device whose
// launches lose to the CPU whatever the machine's load.
type slowDriver struct {
	gpu.Driver
	delay time.Duration
}

func (d slowDriver) NewContext(i int) (gpu.Context, error) {
	c, err := d.Driver.NewContext(i)
	if err != nil {
		return nil, err
	}
	return slowContext{c, d.delay}, nil
}

type slowContext struct {
	gpu.Context
	delay time.Duration
}

func (c slowContext) Launch(f gpu.Function, cfg gpu.LaunchConfig, params [][]byte) error {
	time.Sleep(c.delay)
	return c.Context.Launch(f, cfg, params)
}

// TestSampleLosesDisarms gives the cost model a free device, so that the
// prediction says a launch pays, while every real launch takes half a
// second more than matmul's whole CPU run at 160: the first (timed) launch must
// disarm the hot spot, the report must say "not profitable" with the
// numbers, and the output must be the plain run's.
func TestSampleLosesDisarms(t *testing.T) {
	dir := buildLoops(t, "matmul", "O2-static")
	path := filepath.Join(dir, "O2-static", "matmul")
	prof := staticProfile(t, path, mmNests(t, path))
	want, _ := runPlain(t, path, "160")
	free := accel.DeviceCosts{HostToDevice: 1e18, DeviceToHost: 1e18, ThreadInsnsPerSecond: 1e18}
	var out bytes.Buffer
	_, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: []string{path, "160"}, Stdout: &out, Engine: testEngine},
		accel.Options{Profile: prof, Driver: slowDriver{gpusim.New(gpusim.Options{}), 500 * time.Millisecond}, Costs: &free})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Errorf("output %q, plain %q", out.String(), want)
	}
	h := rep.HotSpots[0]
	t.Logf("%s", accel.FormatReport(rep))
	if h.Launches != 1 || !h.Disarmed || !strings.Contains(h.NotProfitable, "s on the GPU") || !strings.Contains(h.NotProfitable, "CPU") {
		t.Errorf("want one launch, then disarmed as not profitable with the numbers: launches %d, disarmed %v, not profitable %q", h.Launches, h.Disarmed, h.NotProfitable)
	}
	if !strings.Contains(accel.FormatReport(rep), "not profitable: ") {
		t.Errorf("the text report does not say not profitable")
	}
}

// TestKernelGeneratedWhenReached runs matmul with its profile at size 0,
// where the guest never reaches the nest's header, and at 48: the kernel
// is generated only in the second run.
func TestKernelGeneratedWhenReached(t *testing.T) {
	dir := buildLoops(t, "matmul", "O2-static")
	path := filepath.Join(dir, "O2-static", "matmul")
	prof := staticProfile(t, path, mmNests(t, path))
	for _, c := range []struct {
		n       string
		reached bool
	}{{"0", false}, {"48", true}} {
		want, _ := runPlain(t, path, c.n)
		var out bytes.Buffer
		_, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: path, Args: []string{path, c.n}, Stdout: &out, Stderr: &out, Engine: testEngine},
			accel.Options{Profile: prof, Driver: gpusim.New(gpusim.Options{}), AlwaysOffload: true})
		if err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Errorf("n=%s: output %q, plain %q", c.n, out.String(), want)
		}
		h := rep.HotSpots[0]
		if h.KernelGenerated != c.reached || (h.Launches > 0) != c.reached || !h.Offloadable {
			t.Errorf("n=%s: kernel generated %v, launches %d, offloadable %v; want generated and launched %v", c.n, h.KernelGenerated, h.Launches, h.Offloadable, c.reached)
		}
	}
}

// shortStepsSource scales a short array once per step of a sequential
// loop: the inner loop, a few hundred iterations, ends within the plain
// engine's timing runs at every entry, as LU's column scaling does.
const shortStepsSource = `#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
	int n = atoi(argv[1]), m = atoi(argv[2]);
	double *a = malloc(sizeof(double) * m);
	for (int i = 0; i < m; i++)
		a[i] = i % 7;
	for (int k = 0; k < n; k++)
		for (int i = 0; i < m; i++)
			a[i] = a[i] * 0.5 + k;
	double sum = 0;
	for (int i = 0; i < m; i++)
		sum += a[i] * (i % 5 + 1);
	printf("%.17g\n", sum);
	return 0;
}
`

// TestShortInstancesProbed checks that a loop whose every instance ends
// within the timing runs is timed on a few instances and then probed and
// priced: its later instances are launched or refused by the cost model,
// not refused as too short (each had been, and the loop disarmed after
// eight, whatever the costs). With a device that costs nothing, the
// probing of a 200-iteration instance still costs more than the plain
// engine's run of it.
func TestShortInstancesProbed(t *testing.T) {
	bin := compileStatic(t, "shortsteps", shortStepsSource)
	args := []string{bin, "40", "200"}
	_, f, err := pipeline.Profile(context.Background(), pipeline.Config{Path: bin, Args: args, Engine: testEngine}, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := exec.Command(bin, args[1:]...).Output()
	if err != nil {
		t.Fatal(err)
	}
	drv, err := pipeline.OpenGPU("sim")
	if err != nil {
		t.Fatal(err)
	}
	free := accel.DeviceCosts{HostToDevice: 1e18, DeviceToHost: 1e18, ThreadInsnsPerSecond: 1e18}
	var out bytes.Buffer
	_, rep, err := pipeline.Accelerate(context.Background(), pipeline.Config{Path: bin, Args: args, Stdout: &out, Engine: testEngine}, accel.Options{Profile: f, Driver: drv, Costs: &free})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("output %q, native %q", out.String(), want)
	}
	priced, short := 0, 0
	for _, h := range rep.HotSpots {
		priced += h.Launches + h.FallbackReasons[accel.ReasonNotProfitable]
		short += h.FallbackReasons[accel.ReasonTripCount]
	}
	if priced == 0 || short > 8 {
		t.Errorf("the short loop was never priced (%d instances launched or refused by the cost model, %d fallbacks as too short):\n%s", priced, short, accel.FormatReport(rep))
	}
}
