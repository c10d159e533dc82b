// Package confine runs agent processes confined by the kernel: the box's
// own secrets (the data directory, the config file, the release key, the
// control socket, secret files) are out of an agent's reach, it writes
// only its project directory and its own temporary directory, it cannot
// signal or trace the daemon or other runs, every process it starts ends
// with it, and a run that may only reach local vendors has no network
// beyond its own loopback.
//
// # How
//
// The daemon does not exec an agent itself. [Launcher.Confine] rewrites a
// prepared *exec.Cmd so that it starts the launcher with a hidden first
// argument and the run's specification in its environment; the
// launcher's main calls [Main] before anything else, which applies the
// layers below to itself and then execs the agent in place (no resident
// launcher: the agent's memory is its own). The launcher is
// questbox-confine ([LauncherName], cmd/questbox-confine) beside the
// daemon's executable: a binary of this package alone, which starts in a
// fraction of the daemon's time and memory. The probe first asks it for
// its build, once; when it is missing or of another build (see
// [Protocol]), the daemon's own binary, whose main calls [Main] too, is
// the launcher, and the [Report] says why.
//
// Layer A needs no privilege and is always attempted: a new session (no
// controlling terminal, its own process group), descriptors above 2
// closed, no_new_privs, the environment the caller built and nothing
// else, Landlock file system rules (writes only in the run's directories;
// reads everywhere but the hidden paths) with the signal and abstract
// socket scopes, and a seccomp filter that denies the system calls that
// reach other processes or the kernel's configuration (see seccomp_linux.go).
//
// Layer B needs user namespaces (unprivileged, or a root daemon): the run
// starts in new user, PID, mount and IPC namespaces (and a network
// namespace with only its own loopback when it may not reach the
// network); the launcher hides the secret paths under empty read-only
// mounts, mounts a /proc of its own PID namespace, drops every
// capability, and the agent becomes PID 1 of its namespace, so the
// kernel kills whatever it left behind when it exits.
//
// A layer the kernel refuses is not applied and the launcher goes on with
// the others; [Launcher.Probe] finds out once which layers this kernel
// and this service manager allow, and [Report] says which were applied
// and why the others were not. A run never silently gets less than the
// probe found: a layer that worked at the probe and fails for a run fails
// the run. See docs/privacy.md for what an agent can and cannot do.
//
// # Tests
//
// A test binary serves as the launcher (no questbox-confine lies beside
// it, so it is the fallback): a package whose tests run confined commands
// calls [Main] first in its TestMain. internal/buildtest builds the small
// launcher for the tests that use it.
package confine
