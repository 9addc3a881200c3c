//go:build !(linux && amd64)

package jit

import (
	"errors"

	"github.com/gxbit/gxbit/gvinst"
)

// ErrUnsupported is New's error where the engine cannot run: it emits
// x86-64 code and maps it with Linux system calls.
var ErrUnsupported = errors.New("the compiling engine runs only on linux/amd64")

// Supported reports whether this build can compile guest code (linux/amd64).
func Supported() bool { return false }

// Engine is the compiling CPU engine; on this platform New always fails.
type Engine struct{ gvinst.Engine }

// New fails with ErrUnsupported on this platform.
func New(mem *gvinst.Memory, t gvinst.Translator, opts gvinst.InterpOptions) (*Engine, error) {
	return nil, ErrUnsupported
}

// Close does nothing.
func (e *Engine) Close() error { return nil }
