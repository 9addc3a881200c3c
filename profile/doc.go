// Package profile is gxbit's phase 1: it finds the loop nests of a guest
// program and decides which of them can run in parallel.
//
// The static analyzer (Analyze) recovers functions from the entry point,
// the symbol table and direct call targets, builds each function's control
// flow graph at x86 instruction granularity from the lifter's VBlocks,
// computes dominators, natural loops and the loop-nest forest, and names
// the candidate nests: those with no calls and no indirect jumps inside.
//
// The collector (Collector) runs the program on the interpreter with the
// VBlocks of candidate nests instrumented by PROBE instructions: a header
// probe counts the iterations of each level and snapshots the registers, a
// reset probe on each edge into a level restarts its count, and a probe
// before each LD and ST records the access site, the iteration vector, the
// address and the size. Samples are capped per site and per nest; once a
// nest has made its share of probe calls, its code is re-translated
// without probes, so the rest of the run goes at full engine speed.
// Hotness is sampled: every 16384 guest instructions the collector notes
// which nest block the guest is about to run.
//
// Functions are analysed when their entry is first translated (symbols,
// direct call targets, and for a stripped program the targets of indirect
// calls), so code that never runs costs nothing.
//
// The dynamic analyzer (Finish) fits every access site's address as an
// affine function of the iteration vector, finds induction variables,
// invariants and carried scalars from the register snapshots, fits the trip
// count of each level, and asks package polyhedral whether each level
// carries a dependence; the verdict is then checked against the trace.
// Results are written as a versioned JSON profile (format.go, SCHEMA.md).
//
// A level is reported parallel only when the exact dependence test on the
// fitted accesses, the scalar analysis and the trace all agree; anything
// the analysis cannot model makes a level sequential or the nest rejected.
package profile
