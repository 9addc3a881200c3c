package bytesize

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    uint64
		wantErr string
	}{
		{"0", 0, ""},
		{"4096", 4096, ""},
		{"64MiB", 64 << 20, ""},
		{"64M", 64 << 20, ""},
		{"1.5G", 3 << 29, ""},
		{"10MB", 10e6, ""},
		{"2kb", 2000, ""},
		{" 3 KiB ", 3 << 10, ""},
		{"1TiB", 1 << 40, ""},
		{"", 0, "want a number"},
		{"MiB", 0, "want a number"},
		{"12XB", 0, "unknown unit"},
		{"1.2.3", 0, "invalid syntax"},
		{"18446744073709551615", 1<<64 - 1, ""},
		{"18446744073709551616", 0, "out of range"},
		{"20000000TiB", 0, "too large"},
		{"99999999999999999999.5TiB", 0, "too large"},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Parse(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Parse(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestFormatRoundTrip(t *testing.T) {
	for _, n := range []uint64{0, 1, 1000, 1024, 1536, 64 << 20, 3 << 30, 5 << 40, 1<<64 - 1} {
		s := Format(n)
		got, err := Parse(s)
		if err != nil || got != n {
			t.Errorf("Parse(Format(%d)=%q) = %d, %v", n, s, got, err)
		}
	}
	if got := Format(64 << 20); got != "64MiB" {
		t.Errorf("Format(64MiB) = %q", got)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"1", "64MiB", "1.5G", "", "x", "1e9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := Parse(s)
		if err != nil {
			return
		}
		if back, err := Parse(Format(n)); err != nil || back != n {
			t.Fatalf("Parse(%q) = %d, but Format round trip gives %d, %v", s, n, back, err)
		}
	})
}
