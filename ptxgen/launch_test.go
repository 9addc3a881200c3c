package ptxgen

import (
	"reflect"
	"testing"

	"github.com/gxbit/gxbit/gpu"
)

func TestGroups(t *testing.T) {
	k := &Kernel{Sites: []Site{{Store: false}, {Store: true}, {Store: false}, {Store: false}}}
	got := Groups(k, []Range{{0x1008, 0x1010}, {0x2000, 0x2100}, {0x100c, 0x1100}, {0, 0}})
	want := []Group{
		{Range: Range{0x1000, 0x1100}, Sites: []int{0, 2}},
		{Range: Range{0x2000, 0x2100}, Sites: []int{1}, Written: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Groups = %+v, want %+v", got, want)
	}
}

func TestLaunchShapes(t *testing.T) {
	p := defaultPlan()
	for _, c := range []struct {
		count uint64
		want  gpu.LaunchConfig
	}{
		{1, gpu.LaunchConfig{Grid: gpu.Dim3{X: 1, Y: 1, Z: 1}, Block: gpu.Dim3{X: 128, Y: 1, Z: 1}}},
		{1000, gpu.LaunchConfig{Grid: gpu.Dim3{X: 8, Y: 1, Z: 1}, Block: gpu.Dim3{X: 128, Y: 1, Z: 1}}},
		{100000, gpu.LaunchConfig{Grid: gpu.Dim3{X: 391, Y: 1, Z: 1}, Block: gpu.Dim3{X: 256, Y: 1, Z: 1}}},
	} {
		if got := p.Config(c.count); got != c.want {
			t.Errorf("Config(%d) = %+v, want %+v", c.count, got, c.want)
		}
	}
	if got, want := p.Config2D(2000, 2000), (gpu.LaunchConfig{Grid: gpu.Dim3{X: 125, Y: 125, Z: 1}, Block: gpu.Dim3{X: 16, Y: 16, Z: 1}}); got != want {
		t.Errorf("Config2D = %+v, want %+v", got, want)
	}
	// A narrow inner level: a narrow tile, more rows.
	if got, want := p.Config2D(2000, 3), (gpu.LaunchConfig{Grid: gpu.Dim3{X: 1, Y: 32, Z: 1}, Block: gpu.Dim3{X: 4, Y: 64, Z: 1}}); got != want {
		t.Errorf("Config2D narrow = %+v, want %+v", got, want)
	}
	for _, c := range []struct {
		planes, rows, cols uint64
		want               gpu.LaunchConfig
	}{
		// heat3d 160: 32x4x2, as the hand-written kernel.
		{158, 158, 158, gpu.LaunchConfig{Grid: gpu.Dim3{X: 5, Y: 40, Z: 79}, Block: gpu.Dim3{X: 32, Y: 4, Z: 2}}},
		// Five innermost iterations: 8 wide, 16 rows.
		{100, 100, 5, gpu.LaunchConfig{Grid: gpu.Dim3{X: 1, Y: 7, Z: 50}, Block: gpu.Dim3{X: 8, Y: 16, Z: 2}}},
		// Few rows too: no taller than they need.
		{100, 3, 5, gpu.LaunchConfig{Grid: gpu.Dim3{X: 1, Y: 1, Z: 50}, Block: gpu.Dim3{X: 8, Y: 4, Z: 2}}},
	} {
		if got := p.Config3D(c.planes, c.rows, c.cols); got != c.want {
			t.Errorf("Config3D(%d, %d, %d) = %+v, want %+v", c.planes, c.rows, c.cols, got, c.want)
		}
	}
}
