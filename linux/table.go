package linux

import "github.com/gxbit/gxbit/gvinst"

// Support says how completely gxbit implements a system call.
type Support uint8

// The support levels.
const (
	Full        Support = iota // as Linux does it, for everything a single-threaded guest can ask
	Partial                    // the common cases; the note says what is missing
	Unsupported                // returns ENOSYS
	Refused                    // the sandbox forbids it; the note says what the guest gets
)

func (s Support) String() string {
	return [...]string{"full", "partial", "unsupported", "refused"}[s]
}

// handler performs one system call. It returns the value for rax, or an
// error: an Errno (turned into -errno by Process.Syscall), or another error
// that stops the guest.
type handler func(p *Process, cpu *gvinst.CPU, a args) (uint64, error)

// Entry is one row of the system call table.
type Entry struct {
	Name    string
	Fn      handler
	Support Support
	Note    string
}

// table is the x86-64 system call table: number → entry. A number with no
// row is unsupported (ENOSYS) too.
var table = map[int]Entry{
	0:   {"read", (*Process).Read, Full, ""},
	1:   {"write", (*Process).Write, Full, ""},
	2:   {"open", (*Process).Open, Full, "inside the sandbox root"},
	3:   {"close", (*Process).CloseFD, Full, ""},
	4:   {"stat", (*Process).Stat, Full, ""},
	5:   {"fstat", (*Process).Fstat, Full, ""},
	6:   {"lstat", (*Process).Lstat, Full, ""},
	7:   {"poll", (*Process).Poll, Partial, "never waits: a single-threaded guest cannot be woken"},
	8:   {"lseek", (*Process).Lseek, Full, ""},
	9:   {"mmap", (*Process).Mmap, Partial, "writable MAP_SHARED file mappings are refused (ENODEV)"},
	10:  {"mprotect", (*Process).Mprotect, Full, ""},
	11:  {"munmap", (*Process).Munmap, Full, ""},
	12:  {"brk", (*Process).BrkSyscall, Full, ""},
	13:  {"rt_sigaction", (*Process).RtSigaction, Partial, "dispositions are recorded; handlers are never run"},
	14:  {"rt_sigprocmask", (*Process).RtSigprocmask, Full, ""},
	15:  {"rt_sigreturn", nil, Unsupported, "no signal is ever delivered"},
	16:  {"ioctl", (*Process).Ioctl, Partial, "TCGETS and TIOCGWINSZ on the standard streams"},
	17:  {"pread64", (*Process).Pread64, Full, ""},
	18:  {"pwrite64", (*Process).Pwrite64, Full, ""},
	19:  {"readv", (*Process).Readv, Full, ""},
	20:  {"writev", (*Process).Writev, Full, ""},
	21:  {"access", (*Process).Access, Full, ""},
	22:  {"pipe", (*Process).Pipe, Partial, "in-process; a read that would block gets EAGAIN"},
	24:  {"sched_yield", (*Process).Accept, Full, ""},
	25:  {"mremap", (*Process).Mremap, Partial, "MREMAP_FIXED is refused"},
	28:  {"madvise", (*Process).Madvise, Full, ""},
	32:  {"dup", (*Process).Dup, Full, ""},
	33:  {"dup2", (*Process).Dup2, Full, ""},
	35:  {"nanosleep", (*Process).Nanosleep, Partial, "sleeps at most one second a call"},
	39:  {"getpid", (*Process).Getpid, Full, ""},
	41:  {"socket", (*Process).Refuse, Refused, "no network in the sandbox: EACCES"},
	42:  {"connect", (*Process).Refuse, Refused, "no network in the sandbox: EACCES"},
	56:  {"clone", (*Process).Clone, Refused, "threads stop the guest; processes get ENOSYS"},
	57:  {"fork", nil, Unsupported, ""},
	58:  {"vfork", nil, Unsupported, ""},
	59:  {"execve", (*Process).Refuse, Refused, "no execve in the sandbox: EACCES"},
	60:  {"exit", (*Process).Exit, Full, ""},
	61:  {"wait4", (*Process).Wait4, Full, "no children"},
	62:  {"kill", (*Process).KillSyscall, Partial, "to itself only; handlers are not run"},
	63:  {"uname", (*Process).Uname, Full, ""},
	72:  {"fcntl", (*Process).Fcntl, Partial, "descriptor flags and F_DUPFD; no locks"},
	74:  {"fsync", (*Process).Fsync, Full, ""},
	75:  {"fdatasync", (*Process).Fsync, Full, ""},
	77:  {"ftruncate", (*Process).Ftruncate, Full, ""},
	79:  {"getcwd", (*Process).Getcwd, Full, ""},
	80:  {"chdir", (*Process).Chdir, Full, ""},
	81:  {"fchdir", (*Process).Fchdir, Full, ""},
	82:  {"rename", (*Process).Rename, Full, "within one writable directory"},
	83:  {"mkdir", (*Process).Mkdir, Full, ""},
	84:  {"rmdir", (*Process).Rmdir, Full, ""},
	85:  {"creat", (*Process).Creat, Full, ""},
	87:  {"unlink", (*Process).Unlink, Full, ""},
	89:  {"readlink", (*Process).Readlink, Full, ""},
	95:  {"umask", (*Process).Umask, Full, ""},
	96:  {"gettimeofday", (*Process).Gettimeofday, Full, ""},
	97:  {"getrlimit", (*Process).Getrlimit, Full, ""},
	98:  {"getrusage", (*Process).Getrusage, Partial, "user time only"},
	99:  {"sysinfo", (*Process).Sysinfo, Full, ""},
	100: {"times", (*Process).Times, Full, ""},
	101: {"ptrace", (*Process).Refuse, Refused, "no ptrace in the sandbox: EACCES"},
	102: {"getuid", (*Process).Getuid, Full, ""},
	104: {"getgid", (*Process).Getgid, Full, ""},
	107: {"geteuid", (*Process).Getuid, Full, ""},
	108: {"getegid", (*Process).Getgid, Full, ""},
	110: {"getppid", (*Process).Getppid, Full, ""},
	131: {"sigaltstack", (*Process).Sigaltstack, Partial, "no alternate stack is ever used"},
	158: {"arch_prctl", (*Process).ArchPrctl, Full, ""},
	186: {"gettid", (*Process).Getpid, Full, ""},
	200: {"tkill", (*Process).Tkill, Partial, "to itself only"},
	201: {"time", (*Process).Time, Full, ""},
	202: {"futex", (*Process).Futex, Partial, "wake, and wait that cannot block"},
	204: {"sched_getaffinity", (*Process).SchedGetaffinity, Full, "one CPU"},
	217: {"getdents64", (*Process).Getdents64, Full, ""},
	218: {"set_tid_address", (*Process).SetTidAddress, Full, ""},
	228: {"clock_gettime", (*Process).ClockGettime, Full, ""},
	229: {"clock_getres", (*Process).ClockGetres, Full, ""},
	230: {"clock_nanosleep", (*Process).ClockNanosleep, Partial, "relative sleeps, at most one second"},
	231: {"exit_group", (*Process).Exit, Full, ""},
	234: {"tgkill", (*Process).Tgkill, Partial, "to itself only"},
	257: {"openat", (*Process).Openat, Full, "inside the sandbox root"},
	258: {"mkdirat", (*Process).Mkdirat, Full, ""},
	262: {"newfstatat", (*Process).Newfstatat, Full, ""},
	263: {"unlinkat", (*Process).Unlinkat, Full, ""},
	264: {"renameat", (*Process).Renameat, Full, ""},
	267: {"readlinkat", (*Process).Readlinkat, Full, ""},
	269: {"faccessat", (*Process).Faccessat, Full, ""},
	273: {"set_robust_list", (*Process).Accept, Full, ""},
	292: {"dup3", (*Process).Dup3, Full, ""},
	293: {"pipe2", (*Process).Pipe2, Partial, "in-process; a read that would block gets EAGAIN"},
	191: {"getxattr", (*Process).Getxattr, Partial, "no extended attributes"},
	192: {"lgetxattr", (*Process).Getxattr, Partial, "no extended attributes"},
	193: {"fgetxattr", (*Process).Getxattr, Partial, "no extended attributes"},
	194: {"listxattr", (*Process).Listxattr, Partial, "no extended attributes"},
	195: {"llistxattr", (*Process).Listxattr, Partial, "no extended attributes"},
	196: {"flistxattr", (*Process).Listxattr, Partial, "no extended attributes"},
	271: {"ppoll", (*Process).Ppoll, Partial, "never waits"},
	302: {"prlimit64", (*Process).Prlimit64, Partial, "setting limits is accepted and ignored"},
	316: {"renameat2", (*Process).Renameat2, Partial, "no flags"},
	318: {"getrandom", (*Process).Getrandom, Full, ""},
	332: {"statx", (*Process).Statx, Full, ""},
	334: {"rseq", nil, Unsupported, "glibc carries on without it"},
	435: {"clone3", nil, Unsupported, "glibc falls back to clone"},
	439: {"faccessat2", (*Process).Faccessat, Full, ""},
}

// lookup finds the table row of syscall number nr.
func lookup(nr int) (Entry, bool) {
	e, ok := table[nr]
	return e, ok
}

// Table returns a copy of the system call table, for documentation and
// reports: number → name, support level and note.
func Table() map[int]Entry {
	out := make(map[int]Entry, len(table))
	for nr, e := range table {
		e.Fn = nil
		out[nr] = e
	}
	return out
}
