// Package bytesize parses and formats byte counts as gxbit's flags spell
// them: a decimal number with an optional unit, binary (KiB, MiB, GiB, TiB)
// or decimal (kB, MB, GB, TB; K, M, G and T mean the binary units).
package bytesize

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// unit returns the multiplier of unit u (any case) and whether u is known.
func unit(u string) (uint64, bool) {
	switch strings.ToLower(u) {
	case "", "b":
		return 1, true
	case "k", "ki", "kib":
		return 1 << 10, true
	case "m", "mi", "mib":
		return 1 << 20, true
	case "g", "gi", "gib":
		return 1 << 30, true
	case "t", "ti", "tib":
		return 1 << 40, true
	case "kb":
		return 1e3, true
	case "mb":
		return 1e6, true
	case "gb":
		return 1e9, true
	case "tb":
		return 1e12, true
	}
	return 0, false
}

// Parse parses a byte count such as "4096", "64MiB", "1.5G" or "10MB".
func Parse(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, u := t[:i], strings.TrimSpace(t[i:])
	if num == "" {
		return 0, fmt.Errorf("byte size %q: want a number with an optional unit (KiB, MiB, GiB, TiB, kB, MB, GB, TB)", s)
	}
	mult, ok := unit(u)
	if !ok {
		return 0, fmt.Errorf("byte size %q: unknown unit %q", s, u)
	}
	if !strings.Contains(num, ".") {
		n, err := strconv.ParseUint(num, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("byte size %q: %w", s, err)
		}
		hi, lo := bits.Mul64(n, mult)
		if hi != 0 {
			return 0, fmt.Errorf("byte size %q: too large", s)
		}
		return lo, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("byte size %q: %w", s, err)
	}
	v := f * float64(mult)
	if v >= math.MaxUint64 {
		return 0, fmt.Errorf("byte size %q: too large", s)
	}
	return uint64(v), nil
}

// Format writes n with the largest binary unit that divides it exactly,
// so that Parse(Format(n)) == n.
func Format(n uint64) string {
	for _, u := range []struct {
		name string
		mult uint64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.mult && n%u.mult == 0 {
			return strconv.FormatUint(n/u.mult, 10) + u.name
		}
	}
	return strconv.FormatUint(n, 10)
}

// Value is a byte count usable as a flag.Value.
type Value struct {
	// N is the parsed count.
	N uint64
}

// String implements flag.Value.
func (v *Value) String() string {
	if v == nil {
		return "0"
	}
	return Format(v.N)
}

// Set implements flag.Value.
func (v *Value) Set(s string) error {
	n, err := Parse(s)
	if err != nil {
		return err
	}
	v.N = n
	return nil
}
