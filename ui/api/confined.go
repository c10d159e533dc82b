package api

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// The control socket never serves an agent. An agent runs as the daemon's
// user (or as a user namespace's root mapped to it), so the uid check
// alone would let it in; what sets it apart is where it runs. A peer is
// refused as confined when, seen from the daemon's /proc:
//
//   - it runs in another PID namespace than the daemon's: every run
//     gets a PID namespace of its own where the kernel allows one, and a
//     process of a namespace nested in ours is the only kind whose pid
//     the daemon can see (SO_PEERCRED gives 0 for the others, which are
//     no run of ours);
//   - it descends from the daemon (walking PPid): every process the
//     daemon starts is a run or runs what a run produced;
//   - its process group's or its session's leader is the daemon, or
//     descends from it: a run's child that double-forked is reparented
//     away from the daemon, but keeps the group and the session it was
//     started in (unless it calls setsid, and then only the run's PID
//     namespace, or the end of the run, catch it).
//
// The namespace is compared through the NSpid line of
// /proc/PID/status (one pid per nested namespace) rather than the
// /proc/PID/ns/pid link: status is readable for any process the daemon
// sees, while the link needs ptrace access, which an agent denies the
// daemon by making itself non-dumpable.
//
// The daemon is not a child subreaper, though that would keep a run's
// orphans its descendants: it would have to reap what it adopts, and a
// reaper that waits for any child takes the exit statuses os/exec waits
// for. A run's lifetime is bounded where the run starts (its PID
// namespace, whose end kills what it holds).
//
// A peer of the daemon's uid whose /proc entry cannot be read (hidden by
// ProtectProc=invisible because it made itself non-dumpable, or gone
// meanwhile) is refused too: nothing may pass because it could not be
// looked at. A peer of another uid that cannot be read is not an agent of
// this daemon (its agents run as its uid) and is left to the uid check.

// errUnreadable is returned by readProc when a process's status cannot
// be read (gone, or hidden from the daemon).
var errUnreadable = errors.New("its /proc entry cannot be read")

// procStatus is what the confinement check reads of one process.
type procStatus struct {
	ppid    int
	nsDepth int // fields of NSpid: 1 in the /proc mount's own namespace
	pgid    int // in the /proc mount's namespace
	sid     int // in the /proc mount's namespace
}

// readProc reads /proc/PID/status.
func readProc(pid string) (procStatus, error) {
	raw, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return procStatus{}, fmt.Errorf("process %s: %w", pid, errUnreadable)
		}
		return procStatus{}, fmt.Errorf("process %s: %w", pid, err)
	}
	var st procStatus
	seen := 0
	for line := range strings.SplitSeq(string(raw), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(val)
		if len(f) == 0 {
			continue
		}
		switch key {
		case "PPid":
			st.ppid, err = strconv.Atoi(f[0])
		case "NSpid":
			st.nsDepth = len(f)
		case "NSpgid":
			st.pgid, err = strconv.Atoi(f[0])
		case "NSsid":
			st.sid, err = strconv.Atoi(f[0])
		default:
			continue
		}
		if err != nil {
			return procStatus{}, fmt.Errorf("process %s: status line %q: %w", pid, line, err)
		}
		seen++
	}
	if seen != 4 {
		return procStatus{}, fmt.Errorf("process %s: status lacks PPid, NSpid, NSpgid or NSsid (Linux 4.1 or later has them)", pid)
	}
	return st, nil
}

// maxAncestry bounds the walk up a process's ancestors (pid_max is at
// most 4M, but a chain that long is a loop made by pid reuse).
const maxAncestry = 4096

// descends reports whether process pid descends from the process daemon.
// An ancestor that vanishes during the walk reparents its children (to
// init or a subreaper), so the walk starts again from pid, a few times.
func descends(pid, daemon int) (bool, error) {
	var err error
	for range 3 {
		p := pid
		for range maxAncestry {
			if p == daemon {
				return true, nil
			}
			if p <= 1 {
				return false, nil
			}
			var st procStatus
			if st, err = readProc(strconv.Itoa(p)); err != nil {
				break
			}
			p = st.ppid
		}
		if err == nil {
			return false, fmt.Errorf("process %d: more than %d ancestors", pid, maxAncestry)
		}
	}
	return false, err
}

// confinement says why peer p runs inside an agent's confinement, as seen
// by this process (the daemon, of user uid); "" when it does not.
func confinement(p Peer, uid uint32) string {
	pid, self := int(p.PID), os.Getpid()
	if pid == 0 || pid == self {
		// 0: not visible from the daemon's PID namespace, so not in one
		// nested in it, where every run is.
		return ""
	}
	me, err := readProc("self")
	if err != nil {
		return fmt.Sprintf("the daemon cannot read its own /proc entry to compare: %v", err)
	}
	st, err := readProc(strconv.Itoa(pid))
	switch {
	case errors.Is(err, errUnreadable) && p.UID != uid:
		return ""
	case err != nil:
		return fmt.Sprintf("the caller (pid %d) cannot be told apart from an agent: %v", pid, err)
	case st.nsDepth != me.nsDepth:
		return fmt.Sprintf("pid %d runs in another PID namespace than the daemon's", pid)
	}
	if under, err := descends(pid, self); err != nil {
		return fmt.Sprintf("the caller (pid %d) cannot be told apart from an agent: %v", pid, err)
	} else if under {
		return fmt.Sprintf("pid %d was started by the daemon (an agent or one of its processes)", pid)
	}
	// Its process group's and its session's leaders: a run's child that
	// double-forked is reparented away from the daemon but stays in the
	// group and the session it was started in. A leader that is gone
	// tells nothing (its run is over), nor does the group or session the
	// daemon itself runs in without leading it (a shell's, under make
	// run).
	for _, l := range []struct {
		what   string
		leader int
		mine   int
	}{{"process group", st.pgid, me.pgid}, {"session", st.sid, me.sid}} {
		switch {
		case l.leader == self:
			return fmt.Sprintf("pid %d is in the daemon's own %s (a process an agent left behind)", pid, l.what)
		case l.leader == pid || l.leader == l.mine:
			continue
		}
		if under, err := descends(l.leader, self); err == nil && under {
			return fmt.Sprintf("pid %d is in the %s of pid %d, which the daemon started (an agent's)", pid, l.what, l.leader)
		}
	}
	return ""
}
