package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
)

// Main makes this process the launcher when its first argument is one
// of the launcher's verbs: it confines itself and execs the agent, or, in
// probe mode, prints what it could apply, or prints its build for the
// daemon to compare with its own; in each case it never returns.
// Otherwise it returns at once. The main of questbox and of
// questbox-confine, and the TestMain of every package whose tests run
// confined commands, call it first.
func Main() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case runVerb, probeVerb:
	case buildVerb:
		fmt.Println(build())
		os.Exit(0)
	default:
		return
	}
	// Every layer below is set on the calling thread (capabilities,
	// no_new_privs, Landlock) and carried over by the exec that thread
	// makes: it must stay the same thread throughout.
	runtime.LockOSThread()
	var sp spec
	if err := json.Unmarshal([]byte(os.Getenv(specEnv)), &sp); err != nil {
		fail(126, "the run's specification does not decode: %v", err)
	}
	if b := build(); sp.Build != b {
		fail(126, "this launcher is of another build (%s) than the daemon that started it (%s); the agent does not run", b, sp.Build)
	}
	sp.Probe = os.Args[1] == probeVerb
	r, err := apply(&sp)
	if sp.Probe {
		if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
			fail(126, "writing the report: %v", err)
		}
		os.Exit(0)
	}
	if err != nil {
		fail(126, "%v; the agent does not run", err)
	}
	err = syscall.Exec(sp.Path, sp.Args, sp.Env)
	code := 126
	if errors.Is(err, syscall.ENOENT) {
		code = 127
	}
	fail(code, "exec %s: %v", sp.Path, err)
}

// fail says why on stderr (the agent's stderr, which the run's log and
// error keep) and exits with code.
func fail(code int, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "questbox confine: "+format+"\n", args...)
	os.Exit(code)
}

// step is one layer and the function that applies it, which says how
// (a detail for the report) or why not.
type step struct {
	layer Layer
	apply func() (string, error)
}

// apply applies every layer sp does not skip, in order, and reports what
// it did. In a run, the first layer that fails is the error; in probe
// mode every layer is attempted and the error is nil.
func apply(sp *spec) (Report, error) {
	var r Report
	run := func(steps ...step) error {
		for _, s := range steps {
			if sp.skips(s.layer) {
				r.set(s.layer, false, "disabled")
				continue
			}
			detail, err := s.apply()
			if err != nil {
				r.set(s.layer, false, "%v", err)
				if !sp.Probe {
					return fmt.Errorf("%s: %w", s.layer, err)
				}
				continue
			}
			r.set(s.layer, true, "%s", detail)
		}
		return nil
	}
	if err := run(step{Session, checkSession}); err != nil {
		return r, err
	}
	if sp.NS {
		// The mounts need the capabilities the launcher is started with,
		// which the next steps drop.
		if err := run(step{Hide, func() (string, error) { return hide(sp.Hidden, sp.Blank) }}, step{Proc, mountProc}); err != nil {
			return r, err
		}
		if sp.NetNS {
			if err := run(step{Network, loopbackUp}); err != nil {
				return r, err
			}
		}
	}
	// The working directory as the run sees it, after the mounts.
	if err := os.Chdir(sp.Dir); err != nil {
		return r, fmt.Errorf("working directory: %w", err)
	}
	// A hidden socket (the control socket) is out of reach when a mount
	// covers it or Landlock rules unix connections (ABI 9); else no run
	// may make a unix socket to connect with (socketpair still works).
	abi := 0
	err := run(
		step{Capabilities, dropCapabilities},
		step{NoNewPrivs, noNewPrivs},
		step{Descriptors, closeDescriptors},
		step{Environment, func() (string, error) { return fmt.Sprintf("%d variables", len(sp.Env)), nil }},
		step{Landlock, func() (detail string, err error) { abi, detail, err = restrict(sp); return detail, err }},
		step{Seccomp, func() (string, error) {
			return filter(!sp.Network && !sp.NetNS, !r.Applied(Hide) && abi < llResolveUnixABI, !sp.NS)
		}},
	)
	return r, err
}

// checkSession checks that the launcher leads its own session (the
// daemon started it with setsid): no controlling terminal to inject
// input into, and a process group of its own that the daemon kills.
func checkSession() (string, error) {
	sid, err := unix.Getsid(0)
	if err != nil {
		return "", err
	}
	if sid != os.Getpid() {
		return "", fmt.Errorf("session %d is not the launcher's own (%d)", sid, os.Getpid())
	}
	return "", nil
}

// hide covers each hidden path with an empty read-only tmpfs (a
// directory) or blank, an empty file of mode 0 (anything else), after
// making every mount
// private so that nothing done here reaches the host. A path that does
// not exist is left alone (Landlock still denies it if it appears), as
// is one inside a path already covered.
func hide(hidden []string, blank string) (string, error) {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return "", fmt.Errorf("making mounts private: %w", err)
	}
	var covered []string
	for _, h := range hidden { // sorted: a directory comes before what it holds
		if slices.ContainsFunc(covered, func(c string) bool { return within(h, c) }) {
			continue
		}
		fi, err := os.Lstat(h)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", h, err)
		}
		if fi.IsDir() {
			err = unix.Mount("tmpfs", h, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=000,size=4k")
		} else {
			err = unix.Mount(blank, h, "", unix.MS_BIND, "")
		}
		if err != nil {
			return "", fmt.Errorf("covering %s: %w", h, err)
		}
		covered = append(covered, h)
	}
	return fmt.Sprintf("%d paths", len(covered)), nil
}

// mountProc mounts the PID namespace's own /proc over the host's, so that
// the daemon's and other runs' entries do not exist for the run. The
// kernel refuses it where the host's /proc has locked mounts over parts
// of it (systemd's ProtectKernelTunables, for one); the host's /proc then
// stays, and Landlock's rule that a run cannot ptrace what is outside it
// still guards the daemon's environ, mem, fd, root and cwd.
func mountProc() (string, error) {
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return "", fmt.Errorf("mount proc: %w", err)
	}
	return "", nil
}

// loopbackUp brings up the network namespace's loopback, which starts
// down, so that programs that talk to themselves over 127.0.0.1 work.
func loopbackUp() (string, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("loopback: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return "", fmt.Errorf("loopback: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return "", fmt.Errorf("loopback: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return "", fmt.Errorf("loopback up: %w", err)
	}
	return "loopback only", nil
}

// Securebits (linux/securebits.h): uid 0 gets no capability from exec
// (NOROOT), a change of uid changes none (NO_SETUID_FIXUP), no ambient
// capability can be raised, and each is locked.
const secureBits = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<5 | 1<<6 | 1<<7

// dropCapabilities leaves the run without capabilities for good: locked
// securebits, an empty bounding set, no ambient, inheritable, permitted
// or effective capability. Without CAP_SETPCAP (a user that is not root,
// outside a namespace) the bounding set cannot be emptied; that holds no
// capability either, and no_new_privs keeps it from gaining any, so that
// counts as applied.
func dropCapabilities() (string, error) {
	errBits := unix.Prctl(unix.PR_SET_SECUREBITS, secureBits, 0, 0, 0)
	var errBound error
	for c := 0; ; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			break // past the last capability this kernel knows
		}
		if err != nil {
			errBound = err
			break
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return "", fmt.Errorf("clearing ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return "", fmt.Errorf("capset: %w", err)
	}
	if errBits == nil && errBound == nil {
		return "", nil
	}
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return "", fmt.Errorf("capget: %w", err)
	}
	if data[0].Permitted|data[1].Permitted|data[0].Effective|data[1].Effective != 0 {
		return "", fmt.Errorf("capabilities still held (bounding set: %v, securebits: %v)", errBound, errBits)
	}
	return "none held", nil
}

// noNewPrivs sets no_new_privs, which Landlock and seccomp require of an
// unprivileged process, and which keeps set-user-ID programs and file
// capabilities from giving the run more than it has.
func noNewPrivs() (string, error) {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return "", err
	}
	return "", nil
}

// closeDescriptors marks every descriptor above 2 close-on-exec (the Go
// runtime here still needs its own until the exec): whatever the daemon
// leaked, the agent gets only its standard streams.
func closeDescriptors() (string, error) {
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return "", nil
	}
	// Before Linux 5.11: one by one.
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return "", err
	}
	for _, e := range ents {
		var fd int
		if _, err := fmt.Sscan(e.Name(), &fd); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
	return "", nil
}
