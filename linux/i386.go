package linux

import "github.com/gxbit/gxbit/gvinst"

// A 64-bit process may still make system calls through int 0x80, the
// i386 ABI: the number in eax and the arguments in ebx, ecx, edx, esi, edi
// and ebp, each 32 bits (pointers too); the result goes to rax, and no
// other register changes. The calls below take the same arguments in both
// ABIs (scalars, or pointers to structures laid out alike), so each row
// names the x86-64 call that serves it; every other i386 number gets
// ENOSYS.

// i386Call is one row of the i386 table: the x86-64 system call that
// serves it, and which arguments are signed (sign-extended from 32 bits).
type i386Call struct {
	nr64   int
	signed uint8 // bit i: argument i is a signed 32-bit value
}

// i386Table is the i386 system call table: i386 number → the x86-64 call.
var i386Table = map[int]i386Call{
	1:   {60, 1},           // exit(status)
	3:   {0, 1},            // read(fd, buf, count)
	4:   {1, 1},            // write(fd, buf, count)
	5:   {2, 0},            // open(path, flags, mode)
	6:   {3, 1},            // close(fd)
	10:  {87, 0},           // unlink(path)
	12:  {80, 0},           // chdir(path)
	19:  {8, 1<<0 | 1<<1},  // lseek(fd, off_t offset, whence)
	20:  {39, 0},           // getpid
	24:  {102, 0},          // getuid
	33:  {21, 0},           // access(path, mode)
	37:  {62, 1<<0 | 1<<1}, // kill(pid, sig)
	38:  {82, 0},           // rename(old, new)
	39:  {83, 0},           // mkdir(path, mode)
	40:  {84, 0},           // rmdir(path)
	41:  {32, 1},           // dup(fd)
	45:  {12, 0},           // brk(addr)
	47:  {104, 0},          // getgid
	49:  {107, 0},          // geteuid
	50:  {108, 0},          // getegid
	54:  {16, 1},           // ioctl(fd, request, arg): termios and winsize are laid out alike
	60:  {95, 0},           // umask(mask)
	63:  {33, 1<<0 | 1<<1}, // dup2(old, new)
	64:  {110, 0},          // getppid
	85:  {89, 0},           // readlink(path, buf, size)
	183: {79, 0},           // getcwd(buf, size)
	199: {102, 0},          // getuid32
	200: {104, 0},          // getgid32
	201: {107, 0},          // geteuid32
	202: {108, 0},          // getegid32
	224: {186, 0},          // gettid
	252: {231, 1},          // exit_group(status)
}

// i386CountBase is added to an i386 number to count it apart from the
// x86-64 calls (see Counts).
const i386CountBase = 1 << 20

// isInt80 reports whether the instruction that stopped the guest, which
// ends at cpu.PC, is int 0x80 (cd 80) rather than syscall (0f 05).
func (p *Process) isInt80(cpu *gvinst.CPU) bool {
	var b [2]byte
	return cpu.PC >= 2 && p.mem.Peek(cpu.PC-2, b[:]) == nil && b == [2]byte{0xcd, 0x80}
}

// syscall32 performs the i386 system call the guest made with int 0x80.
func (p *Process) syscall32(cpu *gvinst.CPU) error {
	s := &cpu.State
	nr := int(uint32(s[gvinst.S0]))
	raw := [6]uint64{s[3], s[1], s[2], s[6], s[7], s[5]} // ebx, ecx, edx, esi, edi, ebp
	p.counts[i386CountBase+nr]++
	row, ok := i386Table[nr]
	entry, ok64 := lookup(row.nr64)
	if !ok || !ok64 || entry.Fn == nil {
		p.unsupported[i386CountBase+nr]++
		s[gvinst.S0] = errnoRet(ENOSYS)
		return nil
	}
	var a args
	for i, v := range raw {
		if row.signed&(1<<i) != 0 {
			a[i] = uint64(int64(int32(v)))
		} else {
			a[i] = uint64(uint32(v))
		}
	}
	ret, err := p.call(entry, cpu, a, i386CountBase+nr)
	if err != nil {
		return err
	}
	s[gvinst.S0] = ret
	return nil
}

// i386Name names i386 call nr for Counts.
func i386Name(nr int) string {
	if row, ok := i386Table[nr]; ok {
		if e, ok := lookup(row.nr64); ok {
			return "i386 " + e.Name
		}
	}
	return ""
}
