package accel

import (
	"strings"
	"testing"
	"time"

	"github.com/gxbit/gxbit/gpusim"
)

// TestPredict checks the cost model's decisions on made-up device costs.
func TestPredict(t *testing.T) {
	sim := DeviceCosts{LaunchLatency: time.Millisecond, HostToDevice: 1e9, DeviceToHost: 1e9, ThreadInsnsPerSecond: 1e9}
	gpu := DeviceCosts{LaunchLatency: 10 * time.Microsecond, HostToDevice: 2e10, DeviceToHost: 2e10}
	cases := []struct {
		name      string
		c         DeviceCosts
		count     uint64
		cpuIter   time.Duration
		insns     float64
		copyIn    uint64
		perIter   time.Duration
		pays      bool
		kernelMin time.Duration
	}{
		{"few iterations: the launch costs more", sim, 100, time.Microsecond, 20, 0, 0, false, 0},
		{"many heavy iterations", sim, 1e6, time.Microsecond, 100, 0, 0, true, 190 * time.Millisecond},
		{"simulator slower than the CPU per iteration", sim, 1e6, 100 * time.Nanosecond, 100, 0, 0, false, 0},
		{"copies dominate", sim, 1e5, time.Microsecond, 10, 1 << 30, 0, false, 0},
		{"measured kernel time replaces the model", sim, 1e6, time.Microsecond, 1e6, 0, 100 * time.Nanosecond, true, 100 * time.Millisecond},
		{"real GPU: kernel not predicted", gpu, 1e4, time.Microsecond, 1e6, 1 << 20, 0, true, 0},
		{"real GPU: too short", gpu, 10, 100 * time.Nanosecond, 10, 0, 0, false, 0},
	}
	for _, c := range cases {
		e := c.c.Predict(c.count, c.cpuIter, c.insns, c.copyIn, c.perIter)
		if e.Pays() != c.pays {
			t.Errorf("%s: pays %v, want %v: %s", c.name, e.Pays(), c.pays, e)
		}
		if e.Kernel < c.kernelMin {
			t.Errorf("%s: kernel %v, want at least %v", c.name, e.Kernel, c.kernelMin)
		}
		if !strings.Contains(e.String(), "against CPU") {
			t.Errorf("%s: %q", c.name, e)
		}
	}
}

// TestLedger checks when measured launches send a hot spot back to the
// CPU: at once for a launch far slower than the CPU, after two for a
// total slower than the CPU, never for launches that pay.
func TestLedger(t *testing.T) {
	ms := time.Millisecond
	var l ledger
	if why := l.add(2*ms, 1000, time.Microsecond); why != "" { // 2 ms against 1 ms: wait for more
		t.Errorf("one launch 2x slower: disarmed (%s)", why)
	}
	if why := l.add(ms/2, 1000, time.Microsecond); why == "" { // 2.5 ms against 2 ms
		t.Errorf("two launches slower in all: not disarmed")
	}
	l = ledger{}
	if why := l.add(4*ms, 1000, time.Microsecond); why == "" || !strings.Contains(why, "1000 iterations") {
		t.Errorf("one launch 4x slower: %q", why)
	}
	l = ledger{}
	for i := 0; i < 10; i++ {
		if why := l.add(ms/10, 1000, time.Microsecond); why != "" {
			t.Fatalf("launch %d pays 10x: disarmed (%s)", i, why)
		}
	}
	// A better CPU estimate reprices the earlier launches.
	if why := l.add(ms/10, 1000, time.Nanosecond); why == "" {
		t.Errorf("the CPU turned out 1000x faster: not disarmed")
	}
}

// TestMeasureSimulator measures the simulator: every cost is positive and
// an empty launch costs less than a second.
func TestMeasureSimulator(t *testing.T) {
	d := gpusim.New(gpusim.Options{})
	if err := d.Init(); err != nil {
		t.Fatal(err)
	}
	ctx, err := d.NewContext(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	c, err := MeasureDevice(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", c)
	if c.LaunchLatency <= 0 || c.LaunchLatency > time.Second || c.HostToDevice <= 0 || c.DeviceToHost <= 0 || c.ThreadInsnsPerSecond <= 0 {
		t.Errorf("implausible costs %+v", c)
	}
}
