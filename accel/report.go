package accel

import (
	"cmp"
	"fmt"
	"sort"
	"strings"
)

// HotSpotReport is phase 2's account of one hot spot.
type HotSpotReport struct {
	Entry       string `json:"entry"`
	Function    string `json:"function"`
	Header      string `json:"header"` // the mapped level's header
	Offloadable bool   `json:"offloadable"`
	Disarmed    bool   `json:"disarmed,omitempty"` // stopped trying: every instance was too short, or launches did not pay
	// Early says the hot spot was armed at the start rather than after
	// Options.ArmAfter (the device opening from the start served as the
	// delay instead: an initialisation nest then makes its arrays on the
	// device), and Dozed how many times the guest reached it before the
	// device was ready (it then ran on the CPU until the device was).
	Early bool `json:"armed_early,omitempty"`
	Dozed int  `json:"dozed,omitempty"`
	// NotProfitable says, when the cost model sent the hot spot back to
	// the CPU, why, with the numbers.
	NotProfitable   string         `json:"not_profitable,omitempty"`
	SameAs          string         `json:"same_as,omitempty"` // another hot spot with the same mapped level, which counts its launches
	Reason          string         `json:"reason,omitempty"`  // why not, when not
	Launches        int            `json:"launches"`
	Fallbacks       int            `json:"fallbacks"`
	FallbackReasons map[string]int `json:"fallback_reasons"`
	LastFallback    string         `json:"last_fallback,omitempty"`
	Launches2D      int            `json:"launches_2d"`
	// Launches3D are the launches of the 3D kernel (counted in
	// Launches2D too).
	Launches3D int `json:"launches_3d,omitempty"`
	// LaunchesContended are the instances launched while a module loaded
	// on the loader (its JIT holds the driver), which the ledgers and the
	// kernel's time per iteration leave out (Accelerator.jitOverlap).
	LaunchesContended int `json:"launches_contended,omitempty"`
	// Replays are the instances launched without probing: the same
	// live-in values as one probed before (see replay.go).
	Replays int `json:"replays,omitempty"`
	// Extrapolated are the replays of an instance that continued the
	// progression of the two before it (a sequential outer loop's next
	// step), launched with what those were probed or launched with,
	// moved on (see replay.go); counted in Replays too.
	Extrapolated int `json:"replays_extrapolated,omitempty"`
	// DryProbes are the instances whose probed rows ran dry (dryrows.go):
	// jumped through their inner loops by the exit tests' model, the
	// guest left as it was, the GPU launched from their first arrival.
	DryProbes int `json:"dry_probes,omitempty"`
	// DryNote says why the hot spot's last probe did not run dry, where
	// it did not (its rows then ran on the CPU, as before).
	DryNote string `json:"dry_note,omitempty"`
	// EntryCut says the instances started at their first arrival at the
	// header, from the instance it was cut from outside the level on
	// (breakCutter); EntryUncut that the cut was undone (a first
	// arrival's state did not fit).
	EntryCut   bool `json:"entry_cut,omitempty"`
	EntryUncut bool `json:"entry_uncut,omitempty"`
	// Unchecked are the replays that ran the kernel without its
	// footprint checks and without backups: a checked replay of the same
	// input had succeeded, and the kernel's accesses and branches do not
	// depend on the data (ptxgen.Kernel.DataIndependent).
	Unchecked int `json:"launches_unchecked,omitempty"`
	// DryLaunches are the launches of a data-independent kernel's dry
	// variant (no stores) that proved an input, so that the launch after
	// it ran unchecked, without backing up what it overwrites (see
	// Options.DryRunAbove); counted in Unchecked too, not in Launches.
	DryLaunches int `json:"launches_dry,omitempty"`
	// TripRetries are the launches of a 1D kernel that ran again without
	// its counted loop's trip count check (ptxgen.Kernel.TripChecked): a
	// row ran another count than the probed ones, so the stores proved
	// dense by it were copied in after all.
	TripRetries int    `json:"trip_retries,omitempty"`
	Note        string `json:"note,omitempty"` // e.g. why the nest maps in one dimension only
	// ProbedIterations are the iterations of the mapped level the probing
	// engine ran with every access recorded, ProbedAccesses the accesses
	// it recorded in them, and ProbedInstructions the guest instructions it
	// ran (at the interpreter's speed: what probing costs).
	ProbedIterations   int    `json:"probed_iterations,omitempty"`
	ProbedAccesses     uint64 `json:"probed_accesses,omitempty"`
	ProbedInstructions uint64 `json:"probed_instructions,omitempty"`
	// RowInstructions are the guest instructions the probed rows ran on
	// the CPU, on any engine (a dry row's jumped iterations run nowhere).
	RowInstructions uint64 `json:"row_instructions,omitempty"`
	// ProbeSeconds is the wall time of timing the CPU engine and probing,
	// over every instance.
	ProbeSeconds float64 `json:"probe_seconds,omitempty"`
	// TimingSeconds is the part of ProbeSeconds spent timing the CPU
	// engine before probing (timePlain: a budget of instructions, then on
	// to the header, a row at most, which the GPU then does not run).
	TimingSeconds float64 `json:"timing_seconds,omitempty"`
	Iterations    uint64  `json:"gpu_iterations"`
	// TailIterations are the iterations of offloaded instances the CPU
	// ran after the kernel: the one that leaves the loop, and while the
	// plain engine is not yet timed, the one before it (see cpuTail).
	TailIterations uint64 `json:"cpu_tail_iterations"`
	// ExitStates are the instances whose last arrival ran on the GPU,
	// the CPU going on at the loop's exit with the state the kernel
	// stored (ptxgen.Kernel.ExitStates): no CPU tail. ExitNote says why
	// the instances keep their CPU tail where the kernels cannot give
	// the exit state.
	ExitStates int    `json:"exit_states,omitempty"`
	ExitNote   string `json:"exit_note,omitempty"`
	// KernelSeconds is the device's time running the kernels, without
	// their submission; SubmitSeconds the host's time submitting them
	// (gpu.LaunchStats.Submit).
	KernelSeconds float64 `json:"kernel_seconds"`
	SubmitSeconds float64 `json:"submit_seconds"`
	// ThreadInstructions are the instructions the launches executed,
	// summed over active lanes (0 on a back end that cannot count them:
	// the real GPU).
	ThreadInstructions uint64  `json:"thread_instructions,omitempty"`
	CopySeconds        float64 `json:"copy_seconds"`
	// CopyParts splits CopySeconds by what it went to (ptxgen.CopyParts).
	CopyParts *CopyPartsReport `json:"copy_parts,omitempty"`
	// KernelGenerated says whether the kernel was generated: a hot
	// spot's kernel is generated when the guest first reaches its header.
	KernelGenerated bool `json:"kernel_generated"`
	// TranslateSeconds is the time the guest waited for the hot spot's
	// translation and kernels: translating it on the guest's goroutine,
	// or waiting for the background's translation (background.go), and
	// loading its modules or waiting for the loader's loads
	// (prefetch.go). TranslateBackgroundSeconds is the background's
	// translation time of the kernels the hot spot used (0 when the
	// guest's goroutine translated it), and LoadSeconds the time its
	// modules took to load (on a real GPU, the CUDA JIT), wherever that
	// ran.
	TranslateSeconds           float64 `json:"translate_seconds"`
	TranslateBackgroundSeconds float64 `json:"translate_background_seconds,omitempty"`
	LoadSeconds                float64 `json:"load_seconds,omitempty"`
	CPUSecondsEstimate         float64 `json:"cpu_seconds_estimate"`
	KernelSpeedupEst           float64 `json:"kernel_speedup_estimate"` // CPU estimate over kernel and copy time
	BytesIn                    uint64  `json:"bytes_in"`
	BytesOut                   uint64  `json:"bytes_out"`
	BytesReused                uint64  `json:"bytes_resident"` // bytes not copied in again: already on the device
	// BytesDeferred are written bytes left on the device after a launch;
	// the guest pages come back when something touches them.
	BytesDeferred uint64 `json:"bytes_left_on_device"`
	// Schedule is the plan phase 1's model gives the nest on one line
	// (schedule.Summary); ScheduleDetail the same with every decision and
	// refusal and its reason (schedule.Format); ScheduleNote how the
	// kernel phase 2 runs compares with it.
	Schedule       string `json:"schedule,omitempty"`
	ScheduleDetail string `json:"schedule_detail,omitempty"`
	ScheduleNote   string `json:"schedule_note,omitempty"`
}

// KernelSpeedup estimates how much faster the GPU ran the offloaded
// iterations than the CPU engine would have (0 when nothing ran).
func (h *HotSpotReport) KernelSpeedup() float64 {
	if h.KernelSeconds+h.CopySeconds == 0 {
		return 0
	}
	return h.CPUSecondsEstimate / (h.KernelSeconds + h.CopySeconds)
}

// Report is phase 2's account of a run (the --report JSON).
type Report struct {
	HotSpots          []HotSpotReport `json:"hotspots"`
	WallSeconds       float64         `json:"wall_seconds"`
	GuestInstructions uint64          `json:"guest_instructions"`
	Device            string          `json:"device"`
	// DeviceCosts are the device's measured costs (nil when no launch
	// needed them).
	DeviceCosts *DeviceCosts `json:"device_costs,omitempty"`
	// BytesBroughtBack are the bytes left on the device that came back
	// into guest memory (all hot spots: they share the device buffers),
	// and BroughtBackSeconds the time that took.
	BytesBroughtBack   uint64  `json:"bytes_brought_back"`
	BroughtBackSeconds float64 `json:"brought_back_seconds"`
	// BroughtBackFaults are the guest's accesses (and system calls') that
	// found a page only the device held and asked for it;
	// BroughtBackRuns the runs of pages that came back, each in one copy
	// from the device, and BroughtBackPages the pages they held.
	// BroughtBackParts splits the time of those asked for outside a
	// launch (copy_parts' fields).
	BroughtBackFaults uint64           `json:"brought_back_faults,omitempty"`
	BroughtBackRuns   uint64           `json:"brought_back_runs,omitempty"`
	BroughtBackPages  uint64           `json:"brought_back_pages,omitempty"`
	BroughtBackParts  *CopyPartsReport `json:"brought_back_parts,omitempty"`
	// BroughtBackReleased are the bytes of pages brought back whose host
	// memory went to the next ones while the guest read forward (ptxgen's
	// recycle.go), BroughtBackReread those of them read again.
	BroughtBackReleased uint64 `json:"brought_back_released,omitempty"`
	BroughtBackReread   uint64 `json:"brought_back_reread,omitempty"`
	// BroughtBackAhead are the pages that came back with a launch, behind
	// its kernel, where the guest had found them stale after the launches
	// before (ptxgen's ahead.go: with a pinned staging buffer only).
	BroughtBackAhead uint64 `json:"brought_back_ahead,omitempty"`
	// OffloadStopped says why the run sent every hot spot back to the
	// CPU, when its offloading lost in all.
	OffloadStopped string `json:"offload_stopped,omitempty"`
	// KernelsPrefetched are the kernels launches ran that were loaded
	// ahead, with the device context, while the guest ran (prefetch.go).
	KernelsPrefetched int `json:"kernels_prefetched,omitempty"`
	// BytesDropped are written bytes only the device held that never came
	// back because nothing could read them again: the guest unmapped them
	// (free of a large array) or ended.
	BytesDropped uint64 `json:"bytes_dropped,omitempty"`
	// DeviceReadySeconds is when the device context was open (and the
	// device measured, where it was), in seconds since phase 2 began (0
	// when it never opened); DeviceWaitSeconds the time the guest waited
	// for it and for kernels the loader was compiling (prefetch.go): the
	// fixed start a launch pays besides its own.
	DeviceReadySeconds float64 `json:"device_ready_seconds,omitempty"`
	DeviceWaitSeconds  float64 `json:"device_wait_seconds,omitempty"`
	// DeviceOpenSeconds and DeviceMeasureSeconds are what the device
	// took to be ready: opening the context (on a real GPU, with what
	// was left of the driver's initialisation), and measuring the
	// device's costs (MeasureDevice, a module of its own loaded first).
	DeviceOpenSeconds    float64 `json:"device_open_seconds,omitempty"`
	DeviceMeasureSeconds float64 `json:"device_measure_seconds,omitempty"`
	// DeviceCostsCached says the device's costs came from
	// Options.CostsCache, measured by an earlier run (costcache.go).
	DeviceCostsCached bool `json:"device_costs_cached,omitempty"`
	// DeviceInitSeconds is the time the driver took to initialise (on a
	// real GPU, loading libcuda and cuInit), where whoever opened the
	// driver (package pipeline) knows it: gxbit accelerate and run
	// --accelerate leave cuInit running while the guest starts
	// (pipeline.StartGPU).
	DeviceInitSeconds float64 `json:"device_init_seconds,omitempty"`
	// BackgroundSeconds is the time the background translated hot spots
	// (background.go), and BackgroundTranslated how many it translated,
	// used or not (a run's end stops it); BackgroundUsed is how many hot
	// spots used its kernels, and BackgroundRedone how many the guest's
	// goroutine translated again because its memory no longer held what
	// the background's copy did.
	BackgroundSeconds    float64 `json:"background_seconds,omitempty"`
	BackgroundTranslated int     `json:"background_translated,omitempty"`
	BackgroundUsed       int     `json:"background_used,omitempty"`
	BackgroundRedone     int     `json:"background_redone,omitempty"`
	// EmulationSeconds is the host time the simulator spent running
	// kernels that an emulated faster GPU does not count
	// (gpusim.Options.KernelSpeedup, GXBIT_GPUSIM_SPEEDUP): the run's wall
	// time less it is the emulated run's.
	EmulationSeconds float64 `json:"emulation_seconds,omitempty"`
}

// Report returns the per-hot-spot counters so far.
func (a *Accelerator) Report() *Report {
	rep := &Report{Device: cmp.Or(a.dev, a.opts.Driver.Name()), KernelsPrefetched: a.prefetchedUsed, DeviceWaitSeconds: a.deviceWait.Seconds(), EmulationSeconds: a.unseen.Seconds(),
		DeviceOpenSeconds: a.deviceOpen.Seconds(), DeviceMeasureSeconds: a.deviceMeasure.Seconds(), DeviceCostsCached: a.costsCached,
		BackgroundUsed: a.bg.taken, BackgroundRedone: a.bg.redone}
	bgTime, bgDone := a.backgroundDone()
	rep.BackgroundSeconds, rep.BackgroundTranslated = bgTime.Seconds(), bgDone
	if !a.deviceReadyAt.IsZero() {
		rep.DeviceReadySeconds = a.deviceReadyAt.Sub(a.created).Seconds()
	}
	if a.costs != nil {
		c := *a.costs
		c.KernelScale = a.calib.scale()
		rep.DeviceCosts = &c
	}
	back := a.resident.BringBackStats()
	rep.BytesBroughtBack, rep.BroughtBackSeconds = back.Bytes, back.Time.Seconds()
	rep.BroughtBackFaults, rep.BroughtBackRuns, rep.BroughtBackPages = back.Faults, back.Runs, back.Pages
	rep.BroughtBackReleased, rep.BroughtBackReread, rep.BroughtBackAhead = back.Released, back.Reread, back.Ahead
	if back.Faults > 0 {
		rep.BroughtBackParts = &CopyPartsReport{}
		rep.BroughtBackParts.add(back.Parts)
	}
	rep.OffloadStopped = a.stopped
	rep.BytesDropped = a.resident.Discarded()
	for _, sp := range a.order {
		r := sp.rep
		r.KernelSpeedupEst = r.KernelSpeedup()
		if sp.probe != nil {
			r.ProbedInstructions = sp.probe.Stats().GuestInsns
		}
		if sp.dry.engine != nil {
			r.ProbedInstructions += sp.dry.engine.Stats().GuestInsns
		}
		r.FallbackReasons = map[string]int{}
		for k, v := range sp.rep.FallbackReasons {
			r.FallbackReasons[k] = v
		}
		rep.HotSpots = append(rep.HotSpots, r)
	}
	return rep
}

// FormatReport writes the report as text for people.
func FormatReport(r *Report) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "device: %s", r.Device)
	if r.DeviceReadySeconds > 0 {
		measuring := "measuring"
		if r.DeviceCostsCached {
			measuring = "costs kept from an earlier run"
		}
		fmt.Fprintf(&sb, " (ready after %.3fs: context %.3fs, %s %.3fs; the guest waited %.3fs for it and its kernels)", r.DeviceReadySeconds, r.DeviceOpenSeconds, measuring, r.DeviceMeasureSeconds, r.DeviceWaitSeconds)
	}
	sb.WriteString("\n")
	if r.BackgroundTranslated > 0 {
		fmt.Fprintf(&sb, "translated in the background: %d hot spots in %.3fs, %d used, %d translated again on the guest's thread\n", r.BackgroundTranslated, r.BackgroundSeconds, r.BackgroundUsed, r.BackgroundRedone)
	}
	for _, h := range r.HotSpots {
		fmt.Fprintf(&sb, "hot spot %s (%s), level header %s: ", h.Entry, h.Function, h.Header)
		if !h.Offloadable {
			fmt.Fprintf(&sb, "not offloadable: %s\n", h.Reason)
			continue
		}
		fmt.Fprintf(&sb, "%d launches (%d 2D, %d of them 3D, %d unchecked), %d GPU iterations, %d fallbacks", h.Launches, h.Launches2D, h.Launches3D, h.Unchecked, h.Iterations, h.Fallbacks)
		if h.Replays > 0 {
			fmt.Fprintf(&sb, ", %d replays (%d extrapolated)", h.Replays, h.Extrapolated)
		}
		if h.DryLaunches > 0 {
			fmt.Fprintf(&sb, ", %d proven by dry launches", h.DryLaunches)
		}
		var rs []string
		for k, v := range h.FallbackReasons {
			rs = append(rs, fmt.Sprintf("%s: %d", k, v))
		}
		sort.Strings(rs)
		if len(rs) > 0 {
			fmt.Fprintf(&sb, " (%s)", strings.Join(rs, ", "))
		}
		fmt.Fprintf(&sb, "; kernel %.3fs, copies %.3fs, CPU estimate %.3fs", h.KernelSeconds, h.CopySeconds, h.CPUSecondsEstimate)
		if h.ProbedInstructions > 0 {
			fmt.Fprintf(&sb, "; probed %d iterations (%d accesses, %d guest instructions; with the timing runs %.3fs)", h.ProbedIterations, h.ProbedAccesses, h.ProbedInstructions, h.ProbeSeconds)
		}
		if h.Note != "" {
			fmt.Fprintf(&sb, "; %s", h.Note)
		}
		if h.KernelGenerated {
			fmt.Fprintf(&sb, "; the guest waited %.3fs for its kernels (translated in the background in %.3fs, loaded in %.3fs)", h.TranslateSeconds, h.TranslateBackgroundSeconds, h.LoadSeconds)
		}
		if h.Early {
			fmt.Fprintf(&sb, "; armed at the start, reached %d times before the device was ready", h.Dozed)
		}
		if !h.KernelGenerated && h.Dozed == 0 {
			sb.WriteString("; never reached, no kernel generated")
		}
		if h.Launches == 0 && h.LastFallback != "" {
			fmt.Fprintf(&sb, "; last fallback: %s", h.LastFallback)
		}
		if h.NotProfitable != "" {
			fmt.Fprintf(&sb, "; back on the CPU, not profitable: %s", h.NotProfitable)
		}
		sb.WriteString("\n")
		if h.ScheduleDetail != "" {
			fmt.Fprintf(&sb, "  %s\n  %s\n", strings.ReplaceAll(strings.TrimRight(h.ScheduleDetail, "\n"), "\n", "\n  "), h.ScheduleNote)
		}
	}
	if r.OffloadStopped != "" {
		fmt.Fprintf(&sb, "offloading stopped: %s\n", r.OffloadStopped)
	}
	if r.BytesBroughtBack > 0 {
		fmt.Fprintf(&sb, "written bytes left on the device and brought back when read: %d in %.3fs (%d runs of pages, %d accesses asked)\n", r.BytesBroughtBack, r.BroughtBackSeconds, r.BroughtBackRuns, r.BroughtBackFaults)
		if r.BroughtBackReleased > 0 || r.BroughtBackAhead > 0 {
			fmt.Fprintf(&sb, "  of them: %d bytes released again for their host memory (%d read again), %d pages brought back with a launch\n", r.BroughtBackReleased, r.BroughtBackReread, r.BroughtBackAhead)
		}
	}
	if r.BytesDropped > 0 {
		fmt.Fprintf(&sb, "written bytes only the device held, dropped when the guest unmapped them or ended: %d\n", r.BytesDropped)
	}
	fmt.Fprintf(&sb, "wall %.3fs, %d guest instructions\n", r.WallSeconds, r.GuestInstructions)
	return sb.String()
}

// siteObs is what the probed iterations 0 and 1 saw of one x86 access
