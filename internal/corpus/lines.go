package corpus

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"path/filepath"
	"sort"
)

// LineTable maps the code addresses of a binary built with -g to the lines
// of one of its C sources, from the DWARF line table.
type LineTable struct {
	rows []lineRow // every row of the binary's line tables, by address
	src  string
}

type lineRow struct {
	addr uint64
	file string
	line int
}

// ReadLineTable reads the DWARF line tables of the ELF binary at path, for
// the source file whose base name is src.
func ReadLineTable(path, src string) (*LineTable, error) {
	ef, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	defer ef.Close()
	d, err := ef.DWARF()
	if err != nil {
		return nil, fmt.Errorf("corpus: %s: no DWARF: %w", path, err)
	}
	lt := &LineTable{src: src}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("corpus: %s: %w", path, err)
		}
		if e == nil {
			break
		}
		if e.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		lr, err := d.LineReader(e)
		if err == nil && lr != nil {
			var le dwarf.LineEntry
			for lr.Next(&le) == nil {
				if le.File != nil && !le.EndSequence {
					lt.rows = append(lt.rows, lineRow{le.Address, filepath.Base(le.File.Name), le.Line})
				}
			}
		}
		r.SkipChildren()
	}
	sort.SliceStable(lt.rows, func(i, j int) bool { return lt.rows[i].addr < lt.rows[j].addr })
	return lt, nil
}

// Line returns the source line of the code at addr (the last row at or
// below it), or 0 when that code does not come from the table's source.
func (lt *LineTable) Line(addr uint64) int {
	i := sort.Search(len(lt.rows), func(i int) bool { return lt.rows[i].addr > addr })
	if i == 0 {
		return 0
	}
	r := lt.rows[i-1]
	if r.file != lt.src {
		return 0
	}
	return r.line
}
