package accel

import (
	"fmt"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/profile"
	"github.com/gxbit/gxbit/ptxgen"
)

// Reloaded registers (profile.Reload): a register the mapped level (or,
// for the 2D kernel, the level inside it) carries from one iteration to
// the next that holds a value loaded from memory the nest does not write.
// The kernel loads it again in each thread; the runtime passes it no value
// of its own, checks while probing that it holds what the kernel would
// load, and loads it itself for the CPU's tail iterations.

// reloadsOf turns the profile's reloads of level L of hs (depth 1: they
// are the inner level's of a 2D kernel, 2: the innermost level's of a 3D
// one) into the kernel generator's; a reload
// naming a register it does not know is left out, and the level then
// stays sequential for the kernel (it fails to probe).
func reloadsOf(hs *profile.HotSpot, L int, depth int) []ptxgen.Reload {
	if L < 0 || L >= len(hs.Levels) {
		return nil
	}
	var out []ptxgen.Reload
	for _, r := range hs.Levels[L].Reloads {
		slot, ok := gvinst.ParseReg(r.Loc.Reg)
		if !ok || slot.IsVirtual() {
			continue
		}
		pr := ptxgen.Reload{Slot: slot, Inner: depth >= 1, Inner2: depth == 2, Depth: r.Depth, Disp: r.Disp, Size: r.Size, HighZero: r.HighZero, X86: uint64(r.X86)}
		if r.Source != "" {
			if pr.Source, ok = gvinst.ParseReg(r.Source); !ok {
				continue
			}
		}
		for _, t := range r.Terms {
			reg, ok := gvinst.ParseReg(t.Reg)
			if !ok {
				pr.Terms = nil
				break
			}
			pr.Terms = append(pr.Terms, ptxgen.AddrTerm{Reg: reg, Scale: t.Scale})
		}
		if len(pr.Terms) == 0 {
			continue
		}
		out = append(out, pr)
	}
	return out
}

// reloads are the reloaded registers of the spot's kernel: the mapped
// level's, and with inner (the 2D kernel) the inner level's too.
func (sp *spot) reloads(inner bool) []ptxgen.Reload {
	L := mappedLevel(sp.hs)
	rs := reloadsOf(sp.hs, L, 0)
	if inner {
		rs = append(rs, reloadsOf(sp.hs, L+1, 1)...)
	}
	return rs
}

// reloads3 are the reloaded registers of the spot's 3D kernel: the 2D
// kernel's and the innermost level's.
func (sp *spot) reloads3() []ptxgen.Reload {
	return append(sp.reloads(true), reloadsOf(sp.hs, mappedLevel(sp.hs)+2, 2)...)
}

// reloadIndex maps each live-in of ls that a reload of rs (of the level
// whose live-ins ls are: 0 the mapped level's, 1 the inner level's, 2 the
// innermost's) sets to that reload.
func reloadIndex(ls []ptxgen.LiveIn, rs []ptxgen.Reload, level int) map[int]ptxgen.Reload {
	m := map[int]ptxgen.Reload{}
	for _, r := range rs {
		if r.Inner2 != (level == 2) || r.Inner != (level >= 1) {
			continue
		}
		for i, l := range ls {
			if !l.Stack && (l.Slot == r.Slot || r.HighZero && l.Slot == r.Slot+1) {
				m[i] = r
			}
		}
	}
	return m
}

// reloadValue computes what reload r holds given the header values vals
// of the live-ins ls (which hold the registers of its address): the guest
// memory's bytes now, and for the high half of an SSE register, 0.
func reloadValue(mem *gvinst.Memory, ls []ptxgen.LiveIn, vals []uint64, r ptxgen.Reload, high bool) (uint64, error) {
	if high {
		return 0, nil
	}
	addr := uint64(r.Disp)
	for _, t := range r.Terms {
		found := false
		for i, l := range ls {
			if !l.Stack && l.Slot == t.Reg {
				addr += vals[i] * uint64(t.Scale)
				found = true
				break
			}
		}
		if !found {
			return 0, fmt.Errorf("the address of reloaded %s uses %s, which is no live-in of the level", r.Slot, t.Reg)
		}
	}
	return mem.Load(addr, r.Size)
}

// checkReloads compares the reloaded live-ins at a header arrival, vals
// (of the live-ins ls), with what the kernel would load there. arrival is
// the number of iterations since probing began: a reload of depth d is
// only defined d iterations in.
func checkReloads(mem *gvinst.Memory, ls []ptxgen.LiveIn, vals []uint64, idx map[int]ptxgen.Reload, arrival int) string {
	for i, r := range idx {
		if arrival < r.Depth {
			continue
		}
		want, err := reloadValue(mem, ls, vals, r, ls[i].Slot != r.Slot)
		if err != nil {
			return err.Error()
		}
		if vals[i] != want {
			return fmt.Sprintf("%s holds %#x at a header, not the %#x the load at %#x gives %d iteration(s) on", ls[i].Slot, vals[i], want, r.X86, r.Depth)
		}
	}
	return ""
}

// resolveReloads replaces, in vals (live-in values at a header arrival of
// the mapped level), the reloaded registers' values by what they hold
// there: the CPU runs on from that arrival.
func (sp *spot) resolveReloads(vals []uint64) error {
	ls := sp.kernel.LiveIns
	for i, r := range reloadIndex(ls, sp.kernel.Reloads, 0) {
		v, err := reloadValue(sp.a.g.Mem, ls, vals, r, ls[i].Slot != r.Slot)
		if err != nil {
			return err
		}
		vals[i] = v
	}
	return nil
}

// reloadsOverlapStores reports, for the kernel k launched with site
// footprints sites, a reloaded load whose footprint meets a store's: a
// thread could then load a value the kernel wrote, where the CPU carried
// the one read before. Phase 1 saw them apart; this holds it at run time.
func reloadsOverlapStores(k *ptxgen.Kernel, sites []ptxgen.Range) string {
	for _, r := range k.Reloads {
		for i, s := range k.Sites {
			if s.Store || s.X86 != r.X86 {
				continue
			}
			for j, w := range k.Sites {
				if w.Store && sites[i].Overlaps(sites[j]) {
					return fmt.Sprintf("the load at %#x that %s reloads reads bytes the store at %#x writes", r.X86, r.Slot, w.X86)
				}
			}
		}
	}
	return ""
}
