package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// The device's teardown after gxbit has exited (RATIONALE).
//
// A process that used a real GPU leaves the driver its context, memory
// and files (accel.Options.LeaveDevice: nothing reads them again), and
// the kernel tears them down when the process's last file of the device
// closes. Where that is the process's own exit, its parent waits for it:
// 60-170 ms on an H100 host after every gxbit run on the GPU, measured
// from the last line of the report to the shell's wait (0.12-0.16 s of
// gemm's 0.87-1.07 s at 2000 x 2300 x 2600). Destroying the context
// first took as long again (70-110 ms, then 85-105 ms of exit). So
// before exiting, gxbit hands its files of the device to a child process
// (holdDeviceCommand) that only waits for gxbit's end and then exits:
// the teardown is the child's, and gxbit's exit took 1-2 ms.
// GXBIT_CUDA_TEARDOWN=inline keeps the teardown in gxbit's own exit.

// holdDeviceCommand is the hidden command of the child that holds the
// device's files (holdDeviceFiles): it reads its standard input, a pipe
// from its parent, to the end and exits.
const holdDeviceCommand = "hold-device-files"

// deviceFilePrefix is where a GPU driver's device files live (NVIDIA's
// /dev/nvidiactl, /dev/nvidia0, /dev/nvidia-uvm and so on).
const deviceFilePrefix = "/dev/nvidia"

// deviceFile is an open descriptor of this process and the path it
// names.
type deviceFile struct {
	fd   uintptr
	path string
}

// deviceFiles returns the open descriptors of this process whose paths
// begin with prefix, read from fdDir (/proc/self/fd). They stay their
// owner's (the driver's): nothing here closes them.
func deviceFiles(fdDir, prefix string) []deviceFile {
	ents, err := os.ReadDir(fdDir)
	if err != nil {
		return nil
	}
	var files []deviceFile
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		target, err := os.Readlink(filepath.Join(fdDir, e.Name()))
		if err != nil || !strings.HasPrefix(target, prefix) {
			continue
		}
		files = append(files, deviceFile{uintptr(fd), target})
	}
	return files
}

// borrowedFiles keeps every os.File that holdDeviceFiles made of a
// descriptor it does not own reachable until the process exits. A
// collected os.File closes its descriptor, and by then the number may
// be another file's: the owner's (the driver's) own, or one the process
// opened since its owner closed it.
var borrowedFiles []*os.File

// holdDeviceFiles starts exe (gxbit itself) as holdDeviceCommand with
// files, and returns the pipe whose end, at this process's exit, lets the
// child exit in turn; nil when there is nothing to hold or the child
// could not start (the teardown is then the exit's, as without it).
func holdDeviceFiles(exe string, files []deviceFile) *os.File {
	if len(files) == 0 {
		return nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	defer r.Close()
	cmd := exec.Command(exe, holdDeviceCommand)
	cmd.Stdin = r // the child's output goes to /dev/null
	for _, f := range files {
		extra := os.NewFile(f.fd, f.path)
		borrowedFiles = append(borrowedFiles, extra)
		cmd.ExtraFiles = append(cmd.ExtraFiles, extra)
	}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil
	}
	// The child is not waited for: it outlives this process, whose exit
	// closes w.
	_ = cmd.Process.Release()
	return w
}

// handOffDeviceTeardown hands the device's files, if this process opened
// a GPU's, to a child before gxbit exits (see above).
func handOffDeviceTeardown() {
	if os.Getenv("GXBIT_CUDA_TEARDOWN") == "inline" {
		return
	}
	files := deviceFiles("/proc/self/fd", deviceFilePrefix)
	if w := holdDeviceFiles("/proc/self/exe", files); w != nil {
		holderPipe = w
	}
}

// holderPipe keeps the holder's pipe open until the process exits (a
// collected os.File would close it, and the holder would exit early).
var holderPipe *os.File

// holdUntilParentExits is holdDeviceCommand: it returns when standard
// input ends.
func holdUntilParentExits() int {
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}
