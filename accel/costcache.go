package accel

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gxbit/gxbit/gpu"
)

// Device costs kept between runs (RATIONALE).
//
// MeasureDevice loads a module of its own and times launches and copies
// before the loader may load the run's first kernel: on an H100 it took
// 50-140 ms of the 0.3-0.4 s before the device was ready, on every run,
// for numbers that belong to the device, not the run. So a real GPU's
// costs are kept in a file (Options.CostsCache; gxbit's commands use
// DefaultCostsCache) under a key naming the driver, the device (name,
// PCI location, memory) and the measurement's version, and a run on that
// device takes them from there for costsMaxAge after they were measured.
// The simulator's throughput depends on what else the host runs: it is
// measured every run.

// costsVersion names what MeasureDevice measures: a change to it must
// bump this, so that costs kept from the old measurement are measured
// again.
const costsVersion = 1

// costsMaxAge is how long kept costs are used before the device is
// measured again.
const costsMaxAge = 7 * 24 * time.Hour

// keptCosts is one device's entry in the costs file.
type keptCosts struct {
	Costs    DeviceCosts `json:"costs"`
	Measured time.Time   `json:"measured"`
}

// costsKey names the device of props on driver for the costs file.
func costsKey(driver string, props gpu.DeviceProps) string {
	return fmt.Sprintf("%s|%s|pci %d:%d|%d bytes|v%d", driver, props.Name, props.PCIBusID, props.PCIDeviceID, props.TotalMemory, costsVersion)
}

// DefaultCostsCache is where gxbit's commands keep device costs: the
// user's cache directory (os.UserCacheDir), gxbit/device-costs.json; ""
// when there is none.
func DefaultCostsCache() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "gxbit", "device-costs.json")
}

// readKeptCosts reads the costs file at path: an absent file is empty,
// an unreadable or malformed one an error.
func readKeptCosts(path string) (map[string]keptCosts, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]keptCosts{}, nil
	}
	if err != nil {
		return nil, err
	}
	m := map[string]keptCosts{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("device costs file %s: %w", path, err)
	}
	return m, nil
}

// keptCostsFor returns the costs kept at path for key, measured at most
// costsMaxAge before now; false when there are none (no file, no entry, a
// stale or malformed one).
func keptCostsFor(path, key string, now time.Time) (DeviceCosts, bool) {
	if path == "" {
		return DeviceCosts{}, false
	}
	m, err := readKeptCosts(path)
	if err != nil {
		return DeviceCosts{}, false
	}
	k, ok := m[key]
	if !ok || now.Sub(k.Measured) > costsMaxAge || now.Before(k.Measured) || k.Costs.LaunchLatency <= 0 || k.Costs.HostToDevice <= 0 || k.Costs.DeviceToHost <= 0 {
		return DeviceCosts{}, false
	}
	return k.Costs, true
}

// keepCosts writes c for key into the costs file at path, measured at
// now, keeping the other devices' entries (a malformed file is replaced).
// The file is written whole and renamed into place, so that a run reading
// it meanwhile sees the old one or the new one.
func keepCosts(path, key string, c DeviceCosts, now time.Time) error {
	if path == "" {
		return nil
	}
	m, err := readKeptCosts(path)
	if err != nil {
		m = map[string]keptCosts{}
	}
	m[key] = keptCosts{Costs: c, Measured: now}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".device-costs-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// Simulator reports whether driver names the simulated GPU (a
// gpu.Driver's Name): "sim", or "sim-fast", which emulates a faster GPU.
func Simulator(driver string) bool { return strings.HasPrefix(driver, "sim") }

// deviceCostsOf returns the costs of the device of ctx (props, from
// driver): kept ones where Options.CostsCache has them for a real GPU
// (cached true), else measured now (MeasureDevice) and kept. The
// simulator's ("sim", and "sim-fast", which emulates a faster GPU) are
// measured every time.
func deviceCostsOf(ctx gpu.Context, driver string, props gpu.DeviceProps, propsErr error, cache string) (c DeviceCosts, cached bool, err error) {
	sim := driver == "sim"
	key := ""
	if !Simulator(driver) && propsErr == nil && cache != "" {
		key = costsKey(driver, props)
		if c, ok := keptCostsFor(cache, key, time.Now()); ok {
			return c, true, nil
		}
	}
	c, err = MeasureDevice(ctx, sim)
	if err == nil && key != "" {
		// A file that cannot be written costs the next run a
		// measurement, nothing else.
		_ = keepCosts(cache, key, c, time.Now())
	}
	return c, false, err
}
