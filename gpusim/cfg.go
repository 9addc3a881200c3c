package gpusim

// reconvergence computes, for every branch, the program counter where its
// divergent lanes meet again: the first instruction of the immediate
// post-dominator of the branch's basic block. Branches whose block has no
// path to an exit reconverge nowhere (rpc = len(prog)); their lanes rejoin
// only by exiting. Lanes that exit are removed from every stack entry, so a
// reconvergence point only has to be reached by the lanes still running.
func (d *decoder) reconvergence() error {
	prog := d.k.prog
	n := len(prog)
	if n == 0 {
		return nil
	}
	// Basic-block leaders.
	leader := make([]bool, n+1)
	leader[0] = true
	for pc := range prog {
		in := &prog[pc]
		switch in.kind {
		case kBra:
			if in.target < 0 || int(in.target) > n {
				return decodeErr(ptxPos(in), "branch target out of range")
			}
			leader[in.target] = true
			leader[pc+1] = true
		case kExit:
			leader[pc+1] = true
		}
	}
	blockOf := make([]int32, n+1)
	var starts []int32
	for pc := 0; pc <= n; pc++ {
		if leader[pc] && pc < n {
			starts = append(starts, int32(pc))
		}
		blockOf[pc] = int32(len(starts) - 1)
	}
	nb := len(starts)
	exit := nb // virtual exit node
	blockAt := func(pc int32) int {
		if int(pc) >= n {
			return exit
		}
		return int(blockOf[pc])
	}
	succs := make([][]int, nb+1)
	for b := 0; b < nb; b++ {
		end := n
		if b+1 < nb {
			end = int(starts[b+1])
		}
		last := &prog[end-1]
		switch last.kind {
		case kBra:
			succs[b] = append(succs[b], blockAt(last.target))
			if last.guard >= 0 {
				succs[b] = append(succs[b], blockAt(int32(end)))
			}
		case kExit:
			// A predicated exit only removes lanes; the others fall
			// through. Leaving out its edge to the exit lets the paths
			// around it still reconverge below it, as on the hardware.
			if last.guard >= 0 {
				succs[b] = append(succs[b], blockAt(int32(end)))
			} else {
				succs[b] = append(succs[b], exit)
			}
		default:
			succs[b] = append(succs[b], blockAt(int32(end)))
		}
	}
	preds := make([][]int, nb+1) // predecessors in the CFG = successors in the reverse graph
	for b, ss := range succs {
		for _, s := range ss {
			preds[s] = append(preds[s], b)
		}
	}
	// Post-order of the reverse CFG from exit.
	order := make([]int, 0, nb+1)
	num := make([]int, nb+1)
	for i := range num {
		num[i] = -1
	}
	visited := make([]bool, nb+1)
	type item struct{ node, next int }
	stack := []item{{exit, 0}}
	visited[exit] = true
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next < len(preds[top.node]) {
			p := preds[top.node][top.next]
			top.next++
			if !visited[p] {
				visited[p] = true
				stack = append(stack, item{p, 0})
			}
			continue
		}
		num[top.node] = len(order)
		order = append(order, top.node)
		stack = stack[:len(stack)-1]
	}
	// Cooper-Harvey-Kennedy dominators on the reverse graph.
	ipdom := make([]int, nb+1)
	for i := range ipdom {
		ipdom[i] = -1
	}
	ipdom[exit] = exit
	intersect := func(a, b int) int {
		for a != b {
			for num[a] < num[b] {
				a = ipdom[a]
			}
			for num[b] < num[a] {
				b = ipdom[b]
			}
		}
		return a
	}
	for changed := true; changed; {
		changed = false
		for i := len(order) - 1; i >= 0; i-- {
			b := order[i]
			if b == exit {
				continue
			}
			nd := -1
			for _, s := range succs[b] { // reverse-graph predecessors
				if ipdom[s] == -1 {
					continue
				}
				if nd == -1 {
					nd = s
				} else {
					nd = intersect(s, nd)
				}
			}
			if nd != -1 && ipdom[b] != nd {
				ipdom[b] = nd
				changed = true
			}
		}
	}
	for pc := range prog {
		in := &prog[pc]
		if in.kind != kBra {
			continue
		}
		b := int(blockOf[pc])
		p := ipdom[b]
		if p == -1 || p == exit {
			in.rpc = int32(n)
		} else {
			in.rpc = starts[p]
		}
	}
	return nil
}

// straightRuns sets, for every instruction, the length of the run of
// unguarded kALU instructions starting there that no branch enters and no
// lane can reconverge inside. warp.run executes such a run without
// checking the reconvergence stack between its instructions: the active
// mask can only change at a branch, an exit or a reconvergence point, and
// every reconvergence point (a branch's rpc, or the instruction after a
// branch) is a basic-block leader, so it starts a run of its own.
func (d *decoder) straightRuns() {
	prog := d.k.prog
	n := len(prog)
	leader := make([]bool, n+1)
	for pc := range prog {
		in := &prog[pc]
		if in.kind == kBra {
			leader[min(max(int(in.target), 0), n)] = true
			leader[min(max(int(in.rpc), 0), n)] = true
			leader[pc+1] = true
		}
	}
	run := int32(0)
	for pc := n - 1; pc >= 0; pc-- {
		in := &prog[pc]
		if in.kind != kALU || in.guard >= 0 {
			run = 0
			in.run = 0
			continue
		}
		if leader[pc+1] {
			run = 0
		}
		run++
		in.run = run
	}
}
