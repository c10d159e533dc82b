package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// binaryCLI returns a function that runs the built binary with --config
// cfg and --data data, fails the test unless it exits with want, and
// returns its stdout.
func binaryCLI(t *testing.T, bin, cfg, data string) func(want int, args ...string) string {
	return func(want int, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--config", cfg, "--data", data)...)
		var errb strings.Builder
		cmd.Stderr = &errb
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != want {
			t.Fatalf("questbox %v: exit %d, want %d\n%s%s", args, code, want, out, errb.String())
		}
		return string(out)
	}
}

// startBinaryDaemon starts the built binary's daemon with a one-second tick, its
// output appended to dir/daemon.log, waits until it answers on its control
// socket, and kills it when the test ends.
func startBinaryDaemon(t *testing.T, bin, cfg, data, dir string) *exec.Cmd {
	t.Helper()
	d := exec.Command(bin, "run", "--config", cfg, "--data", data, "--tick", "1s")
	logf, err := os.OpenFile(filepath.Join(dir, "daemon.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logf.Close() })
	d.Stdout, d.Stderr = logf, logf
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Process.Kill(); d.Wait() })
	// Until the daemon answers on its control socket a CLI would open the
	// store itself and find it locked by the daemon that is starting.
	sock := filepath.Join(data, "questbox.sock")
	waitFor(t, "the daemon to answer on "+sock, func() bool {
		c, err := net.Dial("unix", sock)
		if err != nil {
			return false
		}
		c.Close()
		return true
	})
	return d
}

// waitForPID waits, as waitFor does, until file exists and a process
// whose command line names mark runs, and returns that process's id as
// this test sees it. An agent runs confined, in a PID namespace of its
// own where it is process 1 (its $$ means nothing out here), and may
// write only the directories its provider names in write: so the agent
// makes file there and keeps running in a shell whose command line names
// mark (no exec), and the test finds it in /proc. Its process group is
// the run's.
func waitForPID(t *testing.T, what, file, mark string) int {
	t.Helper()
	var pid int
	waitFor(t, what, func() bool {
		if _, err := os.Stat(file); err != nil {
			return false
		}
		pids := processesNaming(t, mark)
		if len(pids) != 1 {
			return false
		}
		pid = pids[0]
		return true
	})
	if pid <= 1 {
		t.Fatalf("BUG: agent pid %d: killing its group would kill everything", pid)
	}
	return pid
}

// processesNaming lists the processes, other than this one, whose
// command line holds mark.
func processesNaming(t *testing.T, mark string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && strings.Contains(string(b), mark) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// agentOut is a directory the test's command agents may write: their
// providers name it in write (a confined run writes nothing else but its
// project, scratch and temporary directories). It must hold no data
// directory or config file, which no run may reach.
func agentOut(t *testing.T) string {
	t.Helper()
	return t.TempDir()
}

// waitStoreReleased waits until no other process has the store file db
// open: after a daemon is killed, a child it was starting (between the
// clone and the exec of an agent, when the store's descriptor is still in
// its table) can hold the store's lock for as long as the machine takes to
// schedule it. Giving up names the holders.
func waitStoreReleased(t *testing.T, db string) {
	t.Helper()
	holders := func() []string {
		var who []string
		fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
		for _, fd := range fds {
			if target, err := os.Readlink(fd); err != nil || target != db {
				continue
			}
			pid := strings.Split(fd, "/")[2]
			if pid == strconv.Itoa(os.Getpid()) {
				continue
			}
			cmd, _ := os.ReadFile("/proc/" + pid + "/cmdline")
			who = append(who, pid+" "+strings.ReplaceAll(string(cmd), "\x00", " "))
		}
		return who
	}
	logged := false
	waitFor(t, "the killed daemon's store to be let go", func() bool {
		who := holders()
		if len(who) > 0 && !logged {
			t.Logf("the store is still open in: %v", who)
			logged = true
		}
		return len(who) == 0
	})
}
