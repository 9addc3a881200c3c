// Package gvinst defines GVInst, gxbit's typed, RISC-like intermediate
// representation of guest x86-64 code, and everything that works on it
// without knowing x86: the op table, the text printer and parser, the
// verifier, optimization passes, guest memory, and the interpreter (the CPU
// engine).
//
// GVInst follows the GXBit paper: instructions are grouped in VBlocks (from a
// jump target to the next control transfer); each instruction carries a type
// (.s32, .u64, .f64, .b128, …) that maps onto PTX type specifiers; guest
// state is reached through GET and PUT; memory is reached only through LD and
// ST with one addressing mode, register plus displacement.
//
// # Registers
//
// All values live in one frame of 64-bit slots. The first NumGuestSlots
// slots are the guest state (see Reg); virtual registers v0, v1, … follow
// them. A 128-bit value (.b128) or an x87 80-bit value (.f80) occupies two
// consecutive slots: v4 of type .b128 means slots v4 and v5, low half first.
//
// # The op table
//
// Every op is defined once, in opTable (ops.go): its name, operand layout,
// the modifier it takes, whether it ends a VBlock, its side effects, and
// whether ptxgen can lower it. The printer, parser, verifier, interpreter and
// ptxgen all read that table; tests walk every op and fail on a missing case.
//
// This package imports only the standard library.
package gvinst
