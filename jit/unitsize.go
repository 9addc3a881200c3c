package jit

// MaxUnitInsts is the most x86 instructions a straight run of code should
// be lifted into for this engine (the lifter's MaxInsts; gxbit run sets
// it): a unit that long keeps guest registers in host registers where
// lift.DefaultMaxInsts would cut it into four units, each of which stores
// every register it changed and reloads what it reads. sha256sum's 64
// unrolled rounds ran in 100-instruction units at 0.84 s CPU for 50 MB,
// 0.51 s in 400-instruction ones (1000: no faster).
const MaxUnitInsts = 400
