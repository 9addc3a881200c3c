package gputest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gpu"
)

// Manifest describes one recorded kernel launch, as written by the host
// program beside the kernel (gpusim/testdata/cuda/fixture.h).
type Manifest struct {
	Name        string      `json:"name"`
	PTX         string      `json:"ptx"`    // file name of the PTX module
	Kernel      string      `json:"kernel"` // .entry name
	Grid        [3]uint32   `json:"grid"`
	Block       [3]uint32   `json:"block"`
	SharedBytes uint32      `json:"shared_bytes"` // dynamic shared memory
	Approx      bool        `json:"approx"`       // uses .approx instructions; see Param.Tolerance
	Params      []ParamSpec `json:"params"`
}

// ParamSpec is one kernel parameter of a manifest: a scalar with its bits,
// or a device buffer with optional input and expected-output files.
type ParamSpec struct {
	Name string `json:"name"`
	// Type is "buffer", or the scalar's PTX type without the dot: s32, u32,
	// s64, f32 or f64.
	Type      string     `json:"type"`
	Bits      string     `json:"bits,omitempty"`  // scalar bits, hex "0x..."
	Value     string     `json:"value,omitempty"` // scalar value, for people
	Size      uint64     `json:"size,omitempty"`  // buffer bytes
	Input     string     `json:"input,omitempty"`
	Expected  string     `json:"expected,omitempty"`
	Tolerance *Tolerance `json:"tolerance,omitempty"`
}

// Tolerance lets an output buffer of an approx kernel differ from the
// recording: an element matches when |got-want| <= Abs + Rel*|want|, or
// both are NaN, or both are the same infinity.
type Tolerance struct {
	Elem string  `json:"elem"` // element type: f32 or f64
	Abs  float64 `json:"abs"`
	Rel  float64 `json:"rel"`
	Why  string  `json:"why"` // the documented bound it comes from
}

// Fixture is a manifest with its PTX text and data files loaded.
type Fixture struct {
	Manifest
	Source   string            // PTX text
	Inputs   map[string][]byte // buffer name -> initial contents
	Expected map[string][]byte // buffer name -> recorded contents after the launch
}

// scalarSize gives the byte size of each scalar parameter type.
func scalarSize(typ string) int {
	switch typ {
	case "s32", "u32", "f32":
		return 4
	case "s64", "u64", "f64":
		return 8
	}
	return 0
}

// LoadFixtures reads every <name>.json manifest in dir with the files it
// names, and checks that they agree with each other.
func LoadFixtures(dir string) ([]*Fixture, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("listing fixtures in %s: %w", dir, err)
	}
	sort.Strings(paths)
	var out []*Fixture
	for _, p := range paths {
		f, err := loadFixture(dir, p)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func loadFixture(dir, path string) (*Fixture, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading fixture: %w", err)
	}
	f := &Fixture{Inputs: map[string][]byte{}, Expected: map[string][]byte{}}
	if err := json.Unmarshal(raw, &f.Manifest); err != nil {
		return nil, fmt.Errorf("fixture %s: %w", path, err)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("fixture %s: %s", path, fmt.Sprintf(format, args...))
	}
	m := &f.Manifest
	if m.Name == "" || m.Kernel == "" || m.PTX == "" {
		return nil, bad("name, kernel and ptx are required")
	}
	for k := range 3 {
		if m.Grid[k] == 0 || m.Block[k] == 0 {
			return nil, bad("grid %v and block %v must be positive", m.Grid, m.Block)
		}
	}
	read := func(name string, size uint64) ([]byte, error) {
		if name != filepath.Base(name) {
			return nil, bad("file %q must be in the fixture folder", name)
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, bad("%v", err)
		}
		if size != 0 && uint64(len(b)) != size {
			return nil, bad("%s has %d bytes, want %d", name, len(b), size)
		}
		return b, nil
	}
	src, err := read(m.PTX, 0)
	if err != nil {
		return nil, err
	}
	f.Source = string(src)
	seen := map[string]bool{}
	outputs := 0
	for _, p := range m.Params {
		if p.Name == "" || seen[p.Name] {
			return nil, bad("parameter names must be present and distinct (%q)", p.Name)
		}
		seen[p.Name] = true
		if p.Type != "buffer" {
			n := scalarSize(p.Type)
			if n == 0 {
				return nil, bad("parameter %s has unknown type %q", p.Name, p.Type)
			}
			v, err := strconv.ParseUint(strings.TrimPrefix(p.Bits, "0x"), 16, 64)
			if err != nil || !strings.HasPrefix(p.Bits, "0x") || (n == 4 && v > math.MaxUint32) {
				return nil, bad("parameter %s: bad bits %q for %s", p.Name, p.Bits, p.Type)
			}
			if p.Input != "" || p.Expected != "" || p.Tolerance != nil {
				return nil, bad("scalar parameter %s names files or a tolerance", p.Name)
			}
			continue
		}
		if p.Size == 0 || p.Size > 64<<20 {
			return nil, bad("buffer %s has size %d", p.Name, p.Size)
		}
		if p.Input != "" {
			if f.Inputs[p.Name], err = read(p.Input, p.Size); err != nil {
				return nil, err
			}
		}
		if p.Expected != "" {
			if f.Expected[p.Name], err = read(p.Expected, p.Size); err != nil {
				return nil, err
			}
			outputs++
		}
		if t := p.Tolerance; t != nil {
			if !m.Approx || p.Expected == "" {
				return nil, bad("buffer %s has a tolerance but the kernel is not approx or the buffer is not an output", p.Name)
			}
			es := scalarSize(t.Elem)
			if (t.Elem != "f32" && t.Elem != "f64") || p.Size%uint64(es) != 0 || t.Abs < 0 || t.Rel < 0 || math.IsNaN(t.Abs+t.Rel) {
				return nil, bad("buffer %s has a bad tolerance %+v", p.Name, *t)
			}
		}
	}
	if outputs == 0 {
		return nil, bad("no buffer has an expected output")
	}
	return f, nil
}

// Args returns the parameter bytes of the launch, given the device address
// of each buffer parameter.
func (f *Fixture) Args(bufs map[string]gpu.DevicePtr) ([][]byte, error) {
	var out [][]byte
	for _, p := range f.Params {
		if p.Type == "buffer" {
			ptr, ok := bufs[p.Name]
			if !ok {
				return nil, fmt.Errorf("fixture %s: no device buffer for %s", f.Name, p.Name)
			}
			out = append(out, binary.LittleEndian.AppendUint64(nil, uint64(ptr)))
			continue
		}
		v, err := strconv.ParseUint(strings.TrimPrefix(p.Bits, "0x"), 16, 64)
		if err != nil {
			return nil, fmt.Errorf("fixture %s: parameter %s: %w", f.Name, p.Name, err)
		}
		b := binary.LittleEndian.AppendUint64(nil, v)
		out = append(out, b[:scalarSize(p.Type)])
	}
	return out, nil
}

// Compare reports how got differs from the recorded output of buffer p, as
// at most a few lines; empty when they match.
func Compare(p ParamSpec, got, want []byte) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%s: %d bytes, want %d", p.Name, len(got), len(want))
	}
	var diffs []string
	count := 0
	note := func(s string) {
		count++
		if len(diffs) < 6 {
			diffs = append(diffs, s)
		}
	}
	if t := p.Tolerance; t != nil {
		es := scalarSize(t.Elem)
		for i := 0; i+es <= len(got); i += es {
			g, w := elem(got[i:], es), elem(want[i:], es)
			if !within(g, w, t) {
				note(fmt.Sprintf("  %s[%d] = %.9g, want %.9g within %g + %g*|want|", p.Name, i/es, g, w, t.Abs, t.Rel))
			}
		}
	} else {
		for i := 0; i+4 <= len(got); i += 4 {
			g, w := binary.LittleEndian.Uint32(got[i:]), binary.LittleEndian.Uint32(want[i:])
			if g != w {
				note(fmt.Sprintf("  %s word %d (byte %d) = %#08x (%g), want %#08x (%g)", p.Name, i/4, i, g, math.Float32frombits(g), w, math.Float32frombits(w)))
			}
		}
		for i := len(got) &^ 3; i < len(got); i++ {
			if got[i] != want[i] {
				note(fmt.Sprintf("  %s byte %d = %#02x, want %#02x", p.Name, i, got[i], want[i]))
			}
		}
	}
	if count == 0 {
		return ""
	}
	return fmt.Sprintf("%s: %d mismatches:\n%s", p.Name, count, strings.Join(diffs, "\n"))
}

func elem(b []byte, size int) float64 {
	if size == 4 {
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b))
}

// within reports whether got matches want under t.
func within(got, want float64, t *Tolerance) bool {
	switch {
	case math.IsNaN(got) || math.IsNaN(want):
		return math.IsNaN(got) && math.IsNaN(want)
	case math.IsInf(got, 0) || math.IsInf(want, 0):
		return got == want
	}
	return math.Abs(got-want) <= t.Abs+t.Rel*math.Abs(want)
}

func (s *suite) testFixtures(t *testing.T) {
	s.known(t, "Fixtures")
	dir := s.o.FixtureDir
	if dir == "" {
		var err error
		if dir, err = FixtureDir(); err != nil {
			t.Fatal(err)
		}
	}
	fixtures, err := LoadFixtures(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(fixtures) == 0 {
		t.Fatalf("no fixtures in %s", dir)
	}
	c := s.context(t)
	for _, f := range fixtures {
		t.Run(f.Name, func(t *testing.T) {
			s.known(t, f.Name)
			RunFixture(t, c, f)
		})
	}
}

// RunFixture replays one recorded launch on c and compares every output
// buffer with the recording.
func RunFixture(t *testing.T, c gpu.Context, f *Fixture) {
	t.Helper()
	m, err := c.LoadModule(f.Source)
	if err != nil {
		t.Fatalf("LoadModule(%s): %v", f.PTX, err)
	}
	defer func() {
		if err := m.Unload(); err != nil {
			t.Errorf("Unload: %v", err)
		}
	}()
	fn, err := m.Function(f.Kernel)
	if err != nil {
		t.Fatalf("Function(%s): %v", f.Kernel, err)
	}
	decl := fn.Params()
	if len(decl) != len(f.Params) {
		t.Fatalf("%s declares %d parameters, the manifest has %d", f.Kernel, len(decl), len(f.Params))
	}
	for i, p := range f.Params {
		want := 8
		if p.Type != "buffer" {
			want = scalarSize(p.Type)
		}
		if decl[i].Size != want {
			t.Fatalf("parameter %d (%s): Params() says %d bytes, manifest type %s is %d", i, p.Name, decl[i].Size, p.Type, want)
		}
	}
	bufs := map[string]gpu.DevicePtr{}
	defer func() {
		for name, ptr := range bufs {
			if err := c.Free(ptr); err != nil {
				t.Errorf("Free(%s): %v", name, err)
			}
		}
	}()
	for _, p := range f.Params {
		if p.Type != "buffer" {
			continue
		}
		ptr, err := c.Alloc(p.Size)
		if err != nil {
			t.Fatalf("Alloc(%d) for %s: %v", p.Size, p.Name, err)
		}
		bufs[p.Name] = ptr
		if in, ok := f.Inputs[p.Name]; ok {
			err = c.CopyHtoD(ptr, in)
		} else {
			err = c.Memset(ptr, 0, p.Size)
		}
		if err != nil {
			t.Fatalf("initialising %s: %v", p.Name, err)
		}
	}
	args, err := f.Args(bufs)
	if err != nil {
		t.Fatal(err)
	}
	cfg := gpu.LaunchConfig{
		Grid:        gpu.Dim3{X: f.Grid[0], Y: f.Grid[1], Z: f.Grid[2]},
		Block:       gpu.Dim3{X: f.Block[0], Y: f.Block[1], Z: f.Block[2]},
		SharedBytes: f.SharedBytes,
	}
	if err := c.Launch(fn, cfg, args); err != nil {
		t.Fatalf("Launch: %v", err)
	}
	if err := c.Synchronize(); err != nil {
		t.Fatalf("Synchronize: %v", err)
	}
	if st := c.LastLaunchStats(); st.Kernel != f.Kernel {
		t.Errorf("LastLaunchStats().Kernel = %q, want %q", st.Kernel, f.Kernel)
	}
	for _, p := range f.Params {
		want, ok := f.Expected[p.Name]
		if !ok {
			continue
		}
		got := make([]byte, p.Size)
		if err := c.CopyDtoH(got, bufs[p.Name]); err != nil {
			t.Fatalf("CopyDtoH(%s): %v", p.Name, err)
		}
		if d := Compare(p, got, want); d != "" {
			t.Errorf("%s", d)
		}
	}
}
