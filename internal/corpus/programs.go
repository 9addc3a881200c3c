package corpus

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ErrModeNotBuilt reports that a build directory has no binaries for a mode
// (for example O2-musl where musl-gcc is missing).
var ErrModeNotBuilt = errors.New("build mode not built")

// Programs lists the programs built in mode (a Mode.Name such as
// "O2-static") under the build directory dir, corpus programs first, each
// suite sorted by name, each with the Spec read from its .args side file.
// It returns an error wrapping ErrModeNotBuilt when dir has no folder for
// mode, and an error when a source in dir/src has no binary or a side file
// does not parse.
func Programs(dir, mode string) ([]Program, error) {
	m, err := ParseMode(mode)
	if err != nil {
		return nil, err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	if st, err := os.Stat(filepath.Join(dir, mode)); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("corpus: %s in %s: %w", mode, dir, ErrModeNotBuilt)
	}
	var out []Program
	for _, suite := range Suites() {
		srcDir := filepath.Join(dir, "src", string(suite))
		srcs, err := filepath.Glob(filepath.Join(srcDir, "*.c"))
		if err != nil {
			return nil, fmt.Errorf("corpus: listing %s: %w", srcDir, err)
		}
		sort.Strings(srcs)
		for _, src := range srcs {
			name := strings.TrimSuffix(filepath.Base(src), ".c")
			p := Program{Name: name, Suite: suite, Mode: m, Path: filepath.Join(dir, mode, name), Source: src}
			if st, err := os.Stat(p.Path); err != nil || !st.Mode().IsRegular() {
				return nil, fmt.Errorf("corpus: %s has no binary %s (rerun build.sh): %w", name, p.Path, fs.ErrNotExist)
			}
			argsFile := filepath.Join(srcDir, name+".args")
			data, err := os.ReadFile(argsFile)
			switch {
			case errors.Is(err, fs.ErrNotExist):
			case err != nil:
				return nil, fmt.Errorf("corpus: %w", err)
			default:
				if p.Spec, err = ParseArgs(argsFile, data); err != nil {
					return nil, fmt.Errorf("corpus: %w", err)
				}
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// BuiltModes returns the modes that have a folder under the build directory
// dir, in the order of Modes.
func BuiltModes(dir string) []Mode {
	var out []Mode
	for _, m := range Modes() {
		if st, err := os.Stat(filepath.Join(dir, m.Name)); err == nil && st.IsDir() {
			out = append(out, m)
		}
	}
	return out
}
