//go:build linux && amd64

package jit

import "unsafe"

// enter runs compiled code at code on the machine at address machine and
// returns the code's exit word (see exitWord).
//
//go:noescape
func enter(code, machine uintptr) uint64

func uintptrOf(p *byte) uintptr { return uintptr(unsafe.Pointer(p)) }
