package lift

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gxbit/gxbit/gvinst"
	"github.com/gxbit/gxbit/loader"
)

// miniKernel is just enough of Linux, for tests, to run static glibc and
// musl programs that print and exit: it is not the project's syscall
// layer, only a harness for the lifter.
type miniKernel struct {
	mem    *gvinst.Memory
	brk    uint64
	stdout []byte
	exited bool
	code   int
}

const enosys = -38

func (k *miniKernel) syscall(cpu *gvinst.CPU) {
	s := &cpu.State
	nr, a0, a1, a2 := s[rax], s[rdi], s[rsi], s[rdx]
	ret := int64(enosys)
	switch nr {
	case 1: // write
		if a0 == 1 || a0 == 2 {
			buf := make([]byte, a2)
			if err := k.mem.Read(a1, buf); err == nil {
				k.stdout = append(k.stdout, buf...)
				ret = int64(a2)
			}
		}
	case 20: // writev
		n := int64(0)
		for i := uint64(0); i < a2; i++ {
			base, _ := k.mem.Load(a1+16*i, 8)
			l, _ := k.mem.Load(a1+16*i+8, 8)
			buf := make([]byte, l)
			if err := k.mem.Read(base, buf); err != nil {
				break
			}
			k.stdout = append(k.stdout, buf...)
			n += int64(l)
		}
		ret = n
	case 12: // brk
		ret = int64(k.brk)
		if a0 > k.brk {
			lo := (k.brk + gvinst.PageSize - 1) &^ (gvinst.PageSize - 1)
			hi := (a0 + gvinst.PageSize - 1) &^ (gvinst.PageSize - 1)
			if hi > lo {
				if err := k.mem.Map(lo, hi-lo, gvinst.PermRead|gvinst.PermWrite); err != nil {
					break
				}
			}
			k.brk = a0
			ret = int64(a0)
		}
	case 9: // mmap (anonymous only)
		size := (a1 + gvinst.PageSize - 1) &^ (gvinst.PageSize - 1)
		if addr, ok := k.mem.FindFree(size, loader.MmapBottom, loader.MmapTop); ok && k.mem.Map(addr, size, gvinst.PermRead|gvinst.PermWrite) == nil {
			ret = int64(addr)
		} else {
			ret = -12
		}
	case 11, 10, 13, 14, 273: // munmap, mprotect, rt_sigaction, rt_sigprocmask, set_robust_list
		ret = 0
	case 158: // arch_prctl
		if a0 == 0x1002 { // ARCH_SET_FS
			s[gvinst.FSBase] = a1
			ret = 0
		} else {
			ret = -22
		}
	case 218, 39, 186: // set_tid_address, getpid, gettid
		ret = 1000
	case 16: // ioctl
		ret = -25
	case 318: // getrandom: zeros
		if err := k.mem.Write(a0, make([]byte, a1)); err == nil {
			ret = int64(a1)
		}
	case 60, 231: // exit, exit_group
		k.exited, k.code = true, int(int32(a0))
		ret = 0
	}
	s[rax] = uint64(ret)
}

// TestStaticPrograms builds testdata/hello.c as a static glibc and a
// static musl program, runs each natively and in the interpreter over the
// lifter, and compares stdout and the exit status.
func TestStaticPrograms(t *testing.T) {
	for _, cc := range []struct{ name, compiler string }{{"glibc", "gcc"}, {"musl", "musl-gcc"}} {
		t.Run(cc.name, func(t *testing.T) {
			compiler, err := exec.LookPath(cc.compiler)
			if err != nil {
				t.Skipf("no %s", cc.compiler)
			}
			exe := filepath.Join(t.TempDir(), "hello")
			if out, err := exec.Command(compiler, "-static", "-O2", "-o", exe, "testdata/hello.c").CombinedOutput(); err != nil {
				t.Skipf("%s -static failed: %v\n%s", cc.compiler, err, out)
			}
			native := exec.Command(exe)
			want, _ := native.Output()
			wantCode := native.ProcessState.ExitCode()

			data, err := os.ReadFile(exe)
			if err != nil {
				t.Fatal(err)
			}
			prog, err := loader.ParseELF(exe, data)
			if err != nil {
				t.Fatal(err)
			}
			mem := gvinst.NewMemory(0)
			im, err := loader.Load(mem, prog, loader.LoadOptions{Args: []string{exe}})
			if err != nil {
				t.Fatal(err)
			}
			k := &miniKernel{mem: mem, brk: im.Brk}
			it := gvinst.NewInterpreter(mem, NewLifter(mem), gvinst.InterpOptions{Optimize: true})
			cpu := &gvinst.CPU{PC: im.Entry}
			cpu.State[rsp] = im.SP
			cpu.State[gvinst.RFLAGS] = 0x202
			cpu.State[gvinst.MXCSR] = 0x1f80
			cpu.State[gvinst.FPCW] = 0x37f
			for !k.exited {
				stop := it.Run(cpu, 0)
				if stop.Kind != gvinst.StopSyscall {
					t.Fatalf("guest stopped: %v (stdout so far %q)", stop, k.stdout)
				}
				k.syscall(cpu)
			}
			if string(k.stdout) != string(want) || k.code != wantCode {
				t.Errorf("guest printed %q and exited %d; native printed %q and exited %d", k.stdout, k.code, want, wantCode)
			}
			t.Logf("%d guest instructions", it.Stats().GuestInsns)
		})
	}
}
