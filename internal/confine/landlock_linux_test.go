package confine

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// A hidden directory hides what it holds even when a file in it is
// hidden too: the data directory and the control socket in it.
func TestReadRootsLeaveOutWhatAHiddenDirectoryHolds(t *testing.T) {
	top := t.TempDir()
	data := filepath.Join(top, "data")
	for _, f := range []string{"data/questbox.db", "data/questbox.sock", "data/logs/run-1.log", "project/main.go"} {
		p := filepath.Join(top, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	roots := readRoots([]string{filepath.Join(data, "questbox.sock"), data + "/", filepath.Join(data, "dashboard.password")})
	var project bool
	for _, r := range roots {
		if r.path == data || strings.HasPrefix(r.path, data+"/") {
			t.Errorf("readRoots allows %s, in the hidden %s", r.path, data)
		}
		project = project || r.path == filepath.Join(top, "project")
	}
	if !project {
		t.Errorf("readRoots leaves out %s, beside the hidden directory: %v", filepath.Join(top, "project"), roots)
	}
}

func TestOutermost(t *testing.T) {
	got := outermost([]string{"/var/lib/qb/sock", "/var/lib/qb", "/etc/qb.toml", "/var/lib/qbx", "/var/lib/qb/"})
	want := []string{"/var/lib/qb", "/etc/qb.toml", "/var/lib/qbx"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("outermost = %v, want %v", got, want)
	}
}

// Without a PID namespace, a process the agent starts in a session of
// its own stays in the run's process group, which the run's cleanup
// kills.
func TestGrandchildStaysInTheRunsGroupWithoutNamespaces(t *testing.T) {
	h := newHarness(t, Namespaces)
	mark := "qb-group-" + strconv.Itoa(os.Getpid()) + "-" + filepath.Base(h.project)
	cmd := h.agent("spawn:" + mark)
	cleanup, err := h.l.Confine(cmd, Run{Write: []string{h.project}})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), "spawn:"+mark+" ok") {
		t.Fatalf("confined agent: %v\n%s", err, out)
	}
	pids := processesWith(t, mark)
	if len(pids) != 1 {
		t.Fatalf("want the one grandchild marked %s, found pids %v", mark, pids)
	}
	pid, _ := strconv.Atoi(pids[0])
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pidfd)
	stat, err := os.ReadFile("/proc/" + pids[0] + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) state ppid pgrp session …
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if pgrp := f[2]; pgrp != strconv.Itoa(cmd.Process.Pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the grandchild left the run's process group: its group is %s, the run's %d", pgrp, cmd.Process.Pid)
	}
	// The run's cleanup kills what is left of its group.
	cleanup()
	// The pidfd turns readable when the process exits.
	if _, err := unix.Poll([]unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}, -1); err != nil {
		t.Fatal(err)
	}
}
