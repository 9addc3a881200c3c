package linux

import (
	"crypto/rand"
	"encoding/binary"
	"time"

	"github.com/gxbit/gxbit/gvinst"
)

// The guest's process identity. The guest is alone in its world.
const (
	guestPID  = 4242
	guestPPID = 4241
	guestUID  = 1000
	guestGID  = 1000
)

// Exit implements linux syscall exit(2); the guest is single-threaded, so
// it ends the process as exit_group does.
func (p *Process) Exit(_ *gvinst.CPU, a args) (uint64, error) {
	return 0, &ExitError{Status: int(a[0] & 0xff)}
}

// Getpid implements linux syscall getpid(2) (and gettid(2)).
func (p *Process) Getpid(*gvinst.CPU, args) (uint64, error) { return guestPID, nil }

// Getppid implements linux syscall getppid(2).
func (p *Process) Getppid(*gvinst.CPU, args) (uint64, error) { return guestPPID, nil }

// Getuid implements linux syscall getuid(2) (and geteuid(2)).
func (p *Process) Getuid(*gvinst.CPU, args) (uint64, error) { return guestUID, nil }

// Getgid implements linux syscall getgid(2) (and getegid(2)).
func (p *Process) Getgid(*gvinst.CPU, args) (uint64, error) { return guestGID, nil }

// Uname implements linux syscall uname(2).
func (p *Process) Uname(_ *gvinst.CPU, a args) (uint64, error) {
	b := make([]byte, 6*65)
	for i, s := range []string{"Linux", "gxbit", "6.1.0-gxbit", "#1 SMP PREEMPT_DYNAMIC", "x86_64", "(none)"} {
		copy(b[i*65:], s)
	}
	return 0, p.writeBytes(a[0], b)
}

// ArchPrctl implements linux syscall arch_prctl(2): the fs and gs bases.
func (p *Process) ArchPrctl(cpu *gvinst.CPU, a args) (uint64, error) {
	put := func(v uint64) error {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], v)
		return p.writeBytes(a[1], b[:])
	}
	switch a[0] {
	case 0x1001: // ARCH_SET_GS
		cpu.State[gvinst.GSBase] = a[1]
	case 0x1002: // ARCH_SET_FS
		cpu.State[gvinst.FSBase] = a[1]
	case 0x1003: // ARCH_GET_FS
		return 0, put(cpu.State[gvinst.FSBase])
	case 0x1004: // ARCH_GET_GS
		return 0, put(cpu.State[gvinst.GSBase])
	default:
		return 0, EINVAL
	}
	return 0, nil
}

// SetTidAddress implements linux syscall set_tid_address(2).
func (p *Process) SetTidAddress(*gvinst.CPU, args) (uint64, error) { return guestPID, nil }

// Accept returns 0: for calls whose only effect, in a single-threaded
// sandboxed guest, is bookkeeping the guest never observes
// (set_robust_list, sched_yield, fsync of a pipe, …).
func (p *Process) Accept(*gvinst.CPU, args) (uint64, error) { return 0, nil }

// Prlimit64 implements linux syscall prlimit64(2) for the calling process:
// reads report gxbit's limits; writes are accepted and ignored.
func (p *Process) Prlimit64(_ *gvinst.CPU, a args) (uint64, error) {
	if a[0] != 0 && a[0] != guestPID {
		return 0, ESRCH
	}
	if a[3] != 0 {
		return 0, p.writeBytes(a[3], p.rlimit(a[1]))
	}
	return 0, nil
}

// Getrlimit implements linux syscall getrlimit(2).
func (p *Process) Getrlimit(_ *gvinst.CPU, a args) (uint64, error) {
	return 0, p.writeBytes(a[1], p.rlimit(a[0]))
}

func (p *Process) rlimit(resource uint64) []byte {
	const inf = ^uint64(0)
	cur, max := inf, inf
	switch resource {
	case 3: // RLIMIT_STACK
		cur = 8 << 20
	case 7: // RLIMIT_NOFILE
		cur, max = 1024, 1024
	case 9, 2: // RLIMIT_AS, RLIMIT_DATA
		if l := p.mem.Limit(); l != 0 {
			cur, max = l, l
		}
	}
	b := make([]byte, 16)
	binary.LittleEndian.PutUint64(b, cur)
	binary.LittleEndian.PutUint64(b[8:], max)
	return b
}

// Getrandom implements linux syscall getrandom(2).
func (p *Process) Getrandom(_ *gvinst.CPU, a args) (uint64, error) {
	n := a[1]
	if n > 1<<20 {
		n = 1 << 20
	}
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return 0, EIO
	}
	return n, p.writeBytes(a[0], b)
}

func (p *Process) now() time.Time {
	if p.cfg.Now != nil {
		return p.cfg.Now()
	}
	return time.Now()
}

func timespec(sec, nsec int64) []byte {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint64(b, uint64(sec))
	binary.LittleEndian.PutUint64(b[8:], uint64(nsec))
	return b
}

// ClockGettime implements linux syscall clock_gettime(2).
func (p *Process) ClockGettime(_ *gvinst.CPU, a args) (uint64, error) {
	var d time.Duration
	switch a[0] {
	case 0, 5, 11: // REALTIME, REALTIME_COARSE, TAI
		t := p.now()
		return 0, p.writeBytes(a[1], timespec(t.Unix(), int64(t.Nanosecond())))
	case 1, 4, 6, 7: // MONOTONIC, MONOTONIC_RAW, MONOTONIC_COARSE, BOOTTIME
		d = time.Since(p.start) + time.Hour
	case 2, 3: // PROCESS_CPUTIME_ID, THREAD_CPUTIME_ID
		d = time.Since(p.start)
	default:
		return 0, EINVAL
	}
	return 0, p.writeBytes(a[1], timespec(int64(d/time.Second), int64(d%time.Second)))
}

// ClockGetres implements linux syscall clock_getres(2).
func (p *Process) ClockGetres(_ *gvinst.CPU, a args) (uint64, error) {
	if a[1] != 0 {
		return 0, p.writeBytes(a[1], timespec(0, 1))
	}
	return 0, nil
}

// Gettimeofday implements linux syscall gettimeofday(2).
func (p *Process) Gettimeofday(_ *gvinst.CPU, a args) (uint64, error) {
	if a[0] != 0 {
		t := p.now()
		return 0, p.writeBytes(a[0], timespec(t.Unix(), int64(t.Nanosecond()/1000)))
	}
	return 0, nil
}

// Time implements linux syscall time(2).
func (p *Process) Time(_ *gvinst.CPU, a args) (uint64, error) {
	t := uint64(p.now().Unix())
	if a[0] != 0 {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], t)
		if err := p.writeBytes(a[0], b[:]); err != nil {
			return 0, err
		}
	}
	return t, nil
}

// Nanosleep implements linux syscall nanosleep(2) (and clock_nanosleep(2)
// through it): it sleeps, at most one second per call.
func (p *Process) Nanosleep(_ *gvinst.CPU, a args) (uint64, error) {
	b, err := p.readBytes(a[0], 16)
	if err != nil {
		return 0, err
	}
	d := time.Duration(binary.LittleEndian.Uint64(b))*time.Second + time.Duration(binary.LittleEndian.Uint64(b[8:]))
	if d > time.Second {
		d = time.Second
	}
	if d <= 0 {
		return 0, nil
	}
	if p.ctx == nil {
		time.Sleep(d)
		return 0, nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return 0, nil
	case <-p.ctx.Done():
		return 0, p.interrupted()
	}
}

// ClockNanosleep implements linux syscall clock_nanosleep(2) for relative
// sleeps.
func (p *Process) ClockNanosleep(cpu *gvinst.CPU, a args) (uint64, error) {
	if a[1]&1 != 0 { // TIMER_ABSTIME
		return 0, nil
	}
	return p.Nanosleep(cpu, args{a[2], a[3]})
}

// Times implements linux syscall times(2).
func (p *Process) Times(_ *gvinst.CPU, a args) (uint64, error) {
	ticks := uint64(time.Since(p.start) / (10 * time.Millisecond))
	if a[0] != 0 {
		b := make([]byte, 32)
		binary.LittleEndian.PutUint64(b, ticks)
		if err := p.writeBytes(a[0], b); err != nil {
			return 0, err
		}
	}
	return ticks + 100, nil
}

// Getrusage implements linux syscall getrusage(2): user time is the time
// the guest has run; the rest is zero.
func (p *Process) Getrusage(_ *gvinst.CPU, a args) (uint64, error) {
	b := make([]byte, 144)
	d := time.Since(p.start)
	binary.LittleEndian.PutUint64(b, uint64(d/time.Second))
	binary.LittleEndian.PutUint64(b[8:], uint64(d%time.Second/time.Microsecond))
	return 0, p.writeBytes(a[1], b)
}

// Sysinfo implements linux syscall sysinfo(2).
func (p *Process) Sysinfo(_ *gvinst.CPU, a args) (uint64, error) {
	b := make([]byte, 112)
	binary.LittleEndian.PutUint64(b, uint64(time.Since(p.start)/time.Second)+3600)
	total := p.mem.Limit()
	if total == 0 {
		total = 16 << 30
	}
	binary.LittleEndian.PutUint64(b[32:], total)
	binary.LittleEndian.PutUint64(b[40:], total-p.mem.Mapped())
	binary.LittleEndian.PutUint16(b[80:], 1)
	binary.LittleEndian.PutUint32(b[104:], 1)
	return 0, p.writeBytes(a[0], b)
}

// SchedGetaffinity implements linux syscall sched_getaffinity(2): one CPU.
func (p *Process) SchedGetaffinity(_ *gvinst.CPU, a args) (uint64, error) {
	if a[1] < 8 {
		return 0, EINVAL
	}
	b := make([]byte, 8)
	b[0] = 1
	return 8, p.writeBytes(a[2], b)
}

// Signal numbers and dispositions.
const (
	sigDfl = 0
	sigIgn = 1
)

// RtSigaction implements linux syscall rt_sigaction(2): dispositions are
// recorded and reported back. Handlers are never run (see Kill).
func (p *Process) RtSigaction(_ *gvinst.CPU, a args) (uint64, error) {
	sig := int(a[0])
	if sig < 1 || sig > 64 || sig == 9 || sig == 19 {
		if a[1] != 0 || sig < 1 || sig > 64 {
			return 0, EINVAL
		}
	}
	if a[2] != 0 {
		old := p.sigacts[sig]
		if old == nil {
			old = make([]byte, 32)
		}
		if err := p.writeBytes(a[2], old); err != nil {
			return 0, err
		}
	}
	if a[1] != 0 {
		act, err := p.readBytes(a[1], 32)
		if err != nil {
			return 0, err
		}
		p.sigacts[sig] = act
	}
	return 0, nil
}

// RtSigprocmask implements linux syscall rt_sigprocmask(2).
func (p *Process) RtSigprocmask(_ *gvinst.CPU, a args) (uint64, error) {
	if a[2] != 0 {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], p.sigmask)
		if err := p.writeBytes(a[2], b[:]); err != nil {
			return 0, err
		}
	}
	if a[1] != 0 {
		b, err := p.readBytes(a[1], 8)
		if err != nil {
			return 0, err
		}
		set := binary.LittleEndian.Uint64(b)
		switch a[0] {
		case 0:
			p.sigmask |= set
		case 1:
			p.sigmask &^= set
		case 2:
			p.sigmask = set
		default:
			return 0, EINVAL
		}
	}
	return 0, nil
}

// ignoredByDefault lists the signals whose default action is to ignore them
// (SIGCHLD, SIGURG, SIGWINCH) or that only stop or continue.
func ignoredByDefault(sig int) bool {
	switch sig {
	case 17, 23, 28, 18, 19, 20, 21, 22:
		return true
	}
	return false
}

// Kill implements linux syscall kill(2), tkill(2) and tgkill(2) aimed at
// the guest itself (raise, abort): an ignored signal is dropped; one with
// the default action ends the guest as that signal would; a signal with a
// handler the guest installed stops it with an error, because gxbit does not
// deliver signals to guest handlers.
func (p *Process) Kill(sig int) (uint64, error) {
	switch {
	case sig == 0:
		return 0, nil
	case sig < 1 || sig > 64:
		return 0, EINVAL
	}
	disp := uint64(sigDfl)
	if act := p.sigacts[sig]; act != nil {
		disp = binary.LittleEndian.Uint64(act)
	}
	switch {
	case disp == sigIgn, disp == sigDfl && ignoredByDefault(sig):
		return 0, nil
	case disp == sigDfl:
		return 0, &ExitError{Signal: sig}
	}
	return 0, &UnsupportedError{Syscall: "kill", Why: "delivering a signal to a guest signal handler"}
}

// KillSyscall implements linux syscall kill(2).
func (p *Process) KillSyscall(_ *gvinst.CPU, a args) (uint64, error) {
	if pid := int64(int32(a[0])); pid != guestPID && pid != 0 && pid != -1 {
		return 0, ESRCH
	}
	return p.Kill(int(a[1]))
}

// Tgkill implements linux syscall tgkill(2).
func (p *Process) Tgkill(_ *gvinst.CPU, a args) (uint64, error) {
	if a[1] != guestPID {
		return 0, ESRCH
	}
	return p.Kill(int(a[2]))
}

// Tkill implements linux syscall tkill(2).
func (p *Process) Tkill(_ *gvinst.CPU, a args) (uint64, error) {
	if a[0] != guestPID {
		return 0, ESRCH
	}
	return p.Kill(int(a[1]))
}

// Futex implements linux syscall futex(2) for a single-threaded guest: wakes
// wake nobody, and a wait returns EAGAIN when the word has changed; a wait
// that would block could never be woken, so it stops the guest.
func (p *Process) Futex(_ *gvinst.CPU, a args) (uint64, error) {
	switch a[1] & 0x7f {
	case 0, 9: // FUTEX_WAIT, FUTEX_WAIT_BITSET
		b, err := p.readBytes(a[0], 4)
		if err != nil {
			return 0, err
		}
		if binary.LittleEndian.Uint32(b) != uint32(a[2]) {
			return 0, EAGAIN
		}
		return 0, &UnsupportedError{Syscall: "futex", Why: "a wait in a single-threaded guest would never be woken"}
	case 1, 10: // FUTEX_WAKE, FUTEX_WAKE_BITSET
		return 0, nil
	}
	return 0, ENOSYS
}

// Clone implements linux syscall clone(2) by refusing: a new thread stops
// the guest with a clear error, a new process is ENOSYS.
func (p *Process) Clone(_ *gvinst.CPU, a args) (uint64, error) {
	if a[0]&0x10000 != 0 { // CLONE_THREAD
		return 0, &UnsupportedError{Syscall: "clone", Why: "the guest tried to start a thread; gxbit runs single-threaded programs"}
	}
	return 0, ENOSYS
}

// Refuse is the handler of calls the sandbox forbids (execve, sockets,
// ptrace): the guest gets EACCES.
func (p *Process) Refuse(*gvinst.CPU, args) (uint64, error) { return 0, EACCES }

// Sigaltstack implements linux syscall sigaltstack(2) as accepted and
// reporting no alternate stack.
func (p *Process) Sigaltstack(_ *gvinst.CPU, a args) (uint64, error) {
	if a[1] != 0 {
		b := make([]byte, 24)
		binary.LittleEndian.PutUint32(b[8:], 2) // SS_DISABLE
		return 0, p.writeBytes(a[1], b)
	}
	return 0, nil
}

// Wait4 implements linux syscall wait4(2): the guest has no children.
func (p *Process) Wait4(*gvinst.CPU, args) (uint64, error) { return 0, ECHILD }
