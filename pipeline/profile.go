package pipeline

import (
	"context"

	"github.com/gxbit/gxbit/profile"
)

// ProfileImage describes the loaded program to phase 1: its entry point,
// the address range of its code and its function symbols.
func (g *Guest) ProfileImage() profile.Image {
	im := g.Image
	lo, hi := im.Prog.Span()
	pim := profile.Image{Entry: im.ProgramEntry(), Lo: lo + im.Bias, Hi: hi + im.Bias}
	for _, s := range im.Symbols {
		if s.IsFun {
			pim.Symbols = append(pim.Symbols, profile.Symbol{Name: s.Name, Addr: s.Addr, Size: s.Size})
		}
	}
	return pim
}

// Profile runs a program under the phase 1 collector (gxbit profile): its
// output passes through as with Run, and the profile of its loop nests
// comes back with the result. The collector drives the engine cfg.Engine
// names unless opts.Engine is set.
func Profile(ctx context.Context, cfg Config, opts profile.Options) (*Result, *profile.File, error) {
	g, err := Load(cfg)
	if err != nil {
		return nil, nil, err
	}
	defer g.Close()
	if opts.Engine == nil {
		if opts.Engine, err = g.EngineFunc(); err != nil {
			return nil, nil, err
		}
	}
	sess, err := profile.NewSession(g.Lifter, g.Mem, g.ProfileImage(), opts)
	if err != nil {
		return nil, nil, err
	}
	defer sess.Close()
	res, err := g.RunEngine(ctx, sess.Engine(), nil)
	if err != nil {
		return nil, nil, err
	}
	f := sess.Finish(profile.RunInfo{Program: cfg.Path, ProgramSHA256: g.SHA256, Args: cfg.Args, LoadBias: g.Image.Bias, GuestInstructions: res.Stats.GuestInstructions})
	return res, f, nil
}
