package ptxgen

import (
	"strings"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
)

// loweredElsewhere are the GPU-capable ops TestOpsMatchCPU does not list
// because every kernel uses them: state access, constants, memory and
// control flow, exercised by the nest tests (saxpy, stack slots, 2D).
var loweredElsewhere = map[gvinst.Op]string{
	gvinst.OpGet:    "every live-in",
	gvinst.OpPut:    "every live-out",
	gvinst.OpLi:     "constants in every nest test",
	gvinst.OpLd:     "every nest test loads",
	gvinst.OpSt:     "every nest test stores",
	gvinst.OpJmp:    "block ends",
	gvinst.OpBranch: "loop back edges",
}

// TestEveryGPUOpIsLowered walks the op table: every op marked GPU must be
// checked against the CPU engine by TestOpsMatchCPU or be one of the ops
// every kernel uses, so adding a GPU-capable op without a tested lowering
// fails here.
func TestEveryGPUOpIsLowered(t *testing.T) {
	tested := map[string]bool{}
	for _, c := range opCases {
		for _, part := range strings.Split(c, ";") {
			name, _, _ := strings.Cut(strings.TrimSpace(part), ".")
			tested[name] = true
		}
	}
	for _, op := range gvinst.Ops() {
		if !op.Info().GPU {
			continue
		}
		if _, ok := loweredElsewhere[op]; ok {
			continue
		}
		if !tested[op.String()] {
			t.Errorf("op %s is marked GPU in the op table but no case of TestOpsMatchCPU lowers it", op)
		}
	}
}

// packedUnlowered are the packed ops no lane type of which ptxgen lowers,
// with the reason; every other packed op lowers for some lane type, and
// packedCases runs each type it lowers.
var packedUnlowered = map[gvinst.Op]string{
	gvinst.OpVPcmpStr: "pcmpistri and kin: string scans, whose loops end early and are never parallel",
}

// TestEveryPackedOpIsLowered fails when a packed op has no lowering and
// no reason in packedUnlowered, or has one and is still listed there.
func TestEveryPackedOpIsLowered(t *testing.T) {
	lowered := map[gvinst.Op]bool{}
	for _, c := range packedCases() {
		name, _, _ := strings.Cut(c, ".")
		for _, op := range gvinst.Ops() {
			if op.String() == name {
				lowered[op] = true
			}
		}
	}
	for _, c := range opCases {
		name, _, _ := strings.Cut(c, ".")
		for _, op := range gvinst.Ops() {
			if op.String() == name {
				lowered[op] = true
			}
		}
	}
	for _, op := range gvinst.Ops() {
		if op.Info().Types != gvinst.TVec {
			continue
		}
		_, listed := packedUnlowered[op]
		switch {
		case !lowered[op] && !listed:
			t.Errorf("packed op %s has no PTX lowering and no reason in packedUnlowered", op)
		case lowered[op] && listed:
			t.Errorf("packed op %s lowers now: take it out of packedUnlowered", op)
		}
	}
}
