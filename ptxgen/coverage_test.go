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
