package profile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadVersion(t *testing.T) {
	_, err := Read(bytes.NewReader([]byte(`{"version": 99}`)))
	if !errors.Is(err, ErrVersion) {
		t.Fatalf("got %v, want ErrVersion", err)
	}
	_, err = Read(bytes.NewReader([]byte(`{"version": 1, "hot_spots": []}`)))
	if !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), "profile again") {
		t.Fatalf("version 1: got %v, want ErrVersion asking to profile again", err)
	}
	f, err := Read(bytes.NewReader([]byte(`{"version": 2, "hot_spots": [{"entry": "0x401000", "levels": [{"header": "4198400"}]}]}`)))
	if err != nil {
		t.Fatal(err)
	}
	if f.HotSpots[0].Entry != 0x401000 || f.HotSpots[0].Levels[0].Header != 0x401000 {
		t.Errorf("addresses: %v %v", f.HotSpots[0].Entry, f.HotSpots[0].Levels[0].Header)
	}
}

// FuzzRead checks that Read never panics and that what it accepts writes
// back and reads again to the same file.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"version": 2}`))
	f.Add([]byte(`{"version": 2, "hot_spots": [{"entry": "0x10", "accesses": [{"x86": "0x20", "coeffs": [8, 0], "loop": "u0", "inner": [{"index": "u0", "header": "0x30", "coeff": 8}]}], "inner_loops": [{"index": "u0", "header": "0x30", "parent": "i"}]}]}`))
	seeds, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzRead", "*"))
	for _, s := range seeds {
		if data, err := os.ReadFile(s); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		var a, b bytes.Buffer
		if err := Write(&a, p); err != nil {
			t.Fatal(err)
		}
		q, err := Read(bytes.NewReader(a.Bytes()))
		if err != nil {
			t.Fatalf("re-reading: %v", err)
		}
		if err := Write(&b, q); err != nil {
			t.Fatal(err)
		}
		if a.String() != b.String() {
			t.Fatalf("not stable:\n%s\n%s", a.String(), b.String())
		}
	})
}
