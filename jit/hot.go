package jit

// DefaultHotAfter is the InterpOptions.HotAfter gxbit runs the engine
// with: a block is compiled once the interpreter has run it this many
// times.
//
// RATIONALE: a dynamically linked program runs thousands of blocks a few
// times each while it starts (the dynamic linker, libc's initialisation):
// sha256sum of an empty file runs 3,800 blocks for 330,000 instructions,
// python3 42,000. Compiling each costs more than interpreting it a few
// times (lifting, optimizing and encoding it again, and two mprotect calls
// to place it and two more per link), so cold code stays in the
// interpreter and only the blocks that come back are compiled.
const DefaultHotAfter = 16
