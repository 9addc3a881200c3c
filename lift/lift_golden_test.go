package lift

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

var update = flag.Bool("u", false, "rewrite testdata/lift.golden with the lifter's current output")

// goldenCase is one section of testdata/lift.golden:
//
//	== name
//	hex: bytes
//	<the GVInst text of the block lifted from them>
type goldenCase struct {
	name, hex, want string
}

func readGolden(t *testing.T, path string) []goldenCase {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	for _, sec := range strings.Split(string(data), "== ")[1:] {
		name, rest, _ := strings.Cut(sec, "\n")
		hexLine, body, _ := strings.Cut(rest, "\n")
		if !strings.HasPrefix(hexLine, "hex: ") {
			t.Fatalf("%s: section %q: expected a hex: line", path, name)
		}
		cases = append(cases, goldenCase{name: name, hex: strings.TrimPrefix(hexLine, "hex: "), want: strings.TrimRight(body, "\n") + "\n"})
	}
	return cases
}

// TestGolden lifts each golden case's bytes and compares the printed block
// with the expected text exactly; the text must also parse back to the
// same block.
func TestGolden(t *testing.T) {
	const path = "testdata/lift.golden"
	cases := readGolden(t, path)
	var out strings.Builder
	for _, c := range cases {
		blk := liftHex(t, c.hex)
		got := gvinst.Print(blk)
		if *update {
			out.WriteString("== " + c.name + "\nhex: " + c.hex + "\n" + got + "\n")
			continue
		}
		if got != c.want {
			t.Errorf("%s (%s):\ngot:\n%s\nwant:\n%s", c.name, c.hex, got, c.want)
		}
		parsed, err := gvinst.Parse(got)
		if err != nil || len(parsed) != 1 || gvinst.Print(parsed[0]) != got {
			t.Errorf("%s: printed block does not round-trip: %v", c.name, err)
		}
	}
	if *update {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
