package accel

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gxbit/gxbit/gpu"
	"github.com/gxbit/gxbit/gpusim"
)

// TestKeptCosts checks the device costs file: costs kept for a device come
// back for it and not for another, not once stale or from the future, nor
// when they are malformed; a malformed file is replaced by the next
// write, and other devices' entries survive a write.
func TestKeptCosts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "device-costs.json")
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	h100 := costsKey("cuda", gpu.DeviceProps{Name: "NVIDIA H100 80GB HBM3", PCIBusID: 25, TotalMemory: 80 << 30})
	h200 := costsKey("cuda", gpu.DeviceProps{Name: "NVIDIA H200", PCIBusID: 25, TotalMemory: 141 << 30})
	c := DeviceCosts{LaunchLatency: 25 * time.Microsecond, HostToDevice: 5e9, DeviceToHost: 6e9, DeviceToDevice: 9e9}
	if _, ok := keptCostsFor(path, h100, now); ok {
		t.Fatal("costs kept before any was written")
	}
	if err := keepCosts(path, h100, c, now); err != nil {
		t.Fatal(err)
	}
	if got, ok := keptCostsFor(path, h100, now.Add(time.Hour)); !ok || got != c {
		t.Fatalf("kept %+v (%v), want %+v", got, ok, c)
	}
	if _, ok := keptCostsFor(path, h200, now); ok {
		t.Error("another device's costs came back")
	}
	if _, ok := keptCostsFor(path, h100, now.Add(costsMaxAge+time.Hour)); ok {
		t.Error("stale costs came back")
	}
	if _, ok := keptCostsFor(path, h100, now.Add(-time.Hour)); ok {
		t.Error("costs measured in the future came back")
	}
	if err := keepCosts(path, h200, c, now); err != nil {
		t.Fatal(err)
	}
	if _, ok := keptCostsFor(path, h100, now); !ok {
		t.Error("writing one device's costs lost another's")
	}
	if err := keepCosts(path, h100, DeviceCosts{}, now); err != nil {
		t.Fatal(err)
	}
	if _, ok := keptCostsFor(path, h100, now); ok {
		t.Error("costs without a launch latency or bandwidths came back")
	}
	if err := os.WriteFile(path, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := keptCostsFor(path, h200, now); ok {
		t.Error("a malformed file gave costs")
	}
	if err := keepCosts(path, h100, c, now); err != nil {
		t.Fatal(err)
	}
	if _, ok := keptCostsFor(path, h100, now); !ok {
		t.Error("a malformed file was not replaced")
	}
	if _, ok := keptCostsFor("", h100, now); ok || keepCosts("", h100, c, now) != nil {
		t.Error("no file should keep nothing, quietly")
	}
}

// TestDeviceCostsOfKeeps: a real GPU's costs are measured once and then
// taken from the file (cached); the simulator's are measured every time
// and never written.
func TestDeviceCostsOfKeeps(t *testing.T) {
	ctx, err := gpusim.New(gpusim.Options{}).NewContext(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	path := filepath.Join(t.TempDir(), "device-costs.json")
	props := gpu.DeviceProps{Name: "a device", TotalMemory: 1 << 30}
	first, cached, err := deviceCostsOf(ctx, "cuda", props, nil, path)
	if err != nil || cached {
		t.Fatalf("first run: cached %v, err %v; want measured", cached, err)
	}
	again, cached, err := deviceCostsOf(ctx, "cuda", props, nil, path)
	if err != nil || !cached || again != first {
		t.Fatalf("second run: %+v cached %v err %v; want %+v from the file", again, cached, err, first)
	}
	if _, cached, _ := deviceCostsOf(ctx, "cuda", props, os.ErrNotExist, path); cached {
		t.Error("costs kept for a device whose properties are unknown")
	}
	simPath := filepath.Join(t.TempDir(), "sim-costs.json")
	for _, name := range []string{"sim", "sim", "sim-fast", "sim-fast"} {
		if _, cached, err := deviceCostsOf(ctx, name, props, nil, simPath); err != nil || cached {
			t.Fatalf("the simulator (%s): cached %v, err %v; want measured", name, cached, err)
		}
	}
	if _, err := os.Stat(simPath); err == nil {
		t.Error("the simulator's costs were written")
	}
}
