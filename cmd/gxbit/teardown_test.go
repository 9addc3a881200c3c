package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary stand for gxbit as the device files'
// holder (holdDeviceCommand), which holdDeviceFiles starts.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == holdDeviceCommand {
		os.Exit(holdUntilParentExits())
	}
	os.Exit(m.Run())
}

// openNew creates the empty file dir/name and opens it.
func openNew(t *testing.T, dir, name string) (*os.File, string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return f, path
}

func TestDeviceFiles(t *testing.T) {
	dir := t.TempDir()
	f, dev := openNew(t, dir, "dev-nvidia0")
	defer f.Close()
	got := deviceFiles("/proc/self/fd", filepath.Join(dir, "dev-nvidia"))
	if len(got) != 1 || got[0].fd != f.Fd() || got[0].path != dev {
		t.Fatalf("deviceFiles found %v, want fd %d (%s)", got, f.Fd(), dev)
	}
	if got := deviceFiles("/proc/self/fd", filepath.Join(dir, "none")); len(got) != 0 {
		t.Fatalf("deviceFiles found %v under a prefix nothing has", got)
	}
	if got := deviceFiles(filepath.Join(dir, "missing"), "/"); got != nil {
		t.Fatalf("deviceFiles of a missing directory: %v", got)
	}
}

// TestHoldDeviceFiles: the child holds the files it was handed (the
// file stays open after the parent's copy closes) until the pipe's end,
// and then exits.
func TestHoldDeviceFiles(t *testing.T) {
	if holdDeviceFiles(os.Args[0], nil) != nil {
		t.Fatal("a holder started with no files")
	}
	f, dev := openNew(t, t.TempDir(), "device")
	w := holdDeviceFiles(os.Args[0], []deviceFile{{f.Fd(), dev}})
	if w == nil {
		t.Fatal("the holder did not start")
	}
	f.Close()
	holder := holdersOf(t, dev)
	if len(holder) != 1 {
		t.Fatalf("processes holding %s: %v, want the child alone", dev, holder)
	}
	w.Close()
	deadline := time.Now().Add(10 * time.Second)
	for len(holdersOf(t, dev)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the holder %v still runs 10 s after its pipe closed", holder)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// holdersOf lists the processes with path open, from /proc.
func holdersOf(t *testing.T, path string) []int {
	t.Helper()
	procs, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var pids []int
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		fds, err := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if target, err := os.Readlink(filepath.Join("/proc", p.Name(), "fd", fd.Name())); err == nil && strings.HasPrefix(target, path) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}
