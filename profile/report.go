package profile

import (
	"fmt"
	"io"
	"strings"
)

// Report is the --report view of a profile: every loop nest found.
type Report struct {
	Loops []LoopSummary `json:"loops"`
}

// WriteText prints a profile for people: the loop list, then each hot
// spot with its levels, variables, accesses and scalars.
func WriteText(w io.Writer, f *File) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "profile v%d of %s (%d guest instructions, %d functions)\n", f.Version, f.Program, f.GuestInstructions, f.Functions)
	fmt.Fprintf(&sb, "\nloops:\n")
	for _, l := range f.Loops {
		fmt.Fprintf(&sb, "  %s %-20s depth %d %-10s %5.1f%%  levels %s", l.Entry, l.Function, l.Depth, l.Verdict, 100*l.Share, strings.Join(l.Levels, ","))
		if l.HotSpot >= 0 {
			fmt.Fprintf(&sb, "  hot spot %d", l.HotSpot)
		}
		fmt.Fprintf(&sb, "\n      %s\n", l.Reason)
	}
	for _, h := range f.HotSpots {
		fmt.Fprintf(&sb, "\nhot spot %d: %s at %s, depth %d, %s (levels %v), %.1f%% of the run, %d entries\n", h.ID, h.Function, h.Entry, h.Depth, h.Verdict, h.ParallelLevels, 100*h.Share, h.Entries)
		fmt.Fprintf(&sb, "  live in: %s; live out: %s; exits: %v\n", strings.Join(h.LiveIn, " "), strings.Join(h.LiveOut, " "), h.Exits)
		for _, l := range h.Levels {
			fmt.Fprintf(&sb, "  level %s: header %s, latches %v, trips %q (seen %v): %s — %s\n", l.Index, l.Header, l.Latches, l.TripCount, l.ObservedTrips, l.Verdict, l.Reason)
			for _, iv := range l.IVs {
				fmt.Fprintf(&sb, "    iv %s step %d init %s %v\n", iv.Loc, iv.Step, iv.Init, iv.InitObserved)
			}
			if len(l.Invariants) > 0 {
				var inv []string
				for _, x := range l.Invariants {
					inv = append(inv, x.String())
				}
				fmt.Fprintf(&sb, "    invariant %s\n", strings.Join(inv, " "))
			}
			if b := l.Bound; b != nil {
				fmt.Fprintf(&sb, "    bound: while %s %s %s (signed %v) at %s\n", b.IV, b.Cond, b.Limit, b.Signed, b.X86)
			}
		}
		for _, il := range h.InnerLoops {
			fmt.Fprintf(&sb, "  inner loop %s in %s: header %s, trips %q (seen %v): %s — %s\n", il.Index, il.Parent, il.Header, il.TripCount, il.ObservedTrips, il.Verdict, il.Reason)
		}
		for _, v := range h.Vars {
			if v.Kind == "index" {
				continue
			}
			loc := ""
			if v.Loc != nil {
				loc = " = " + v.Loc.String()
			}
			fmt.Fprintf(&sb, "  %s %s%s seen %v\n", v.Kind, v.Name, loc, v.Observed)
		}
		for i, a := range h.Accesses {
			fn := a.Function
			if !a.Affine {
				fn = "not affine: " + a.Why
			}
			st := ""
			if a.Stack {
				st = " stack"
			}
			fmt.Fprintf(&sb, "  access %d at %s in %s: %s %d [%s] array %d%s, %d samples\n", i, a.X86, a.Loop, a.Kind, a.Size, fn, a.Group, st, a.Samples)
		}
		for _, s := range h.Scalars {
			fmt.Fprintf(&sb, "  scalar %s at level %s: %s %s\n", s.Loc, indexName(s.Level), s.Kind, s.Op)
		}
	}
	_, err := io.WriteString(w, sb.String())
	return err
}
