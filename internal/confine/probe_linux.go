package confine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// rewrite makes cmd start the launcher with sp.
func (l *Launcher) rewrite(cmd *exec.Cmd, sp *spec) error {
	b, err := json.Marshal(sp)
	if err != nil {
		return fmt.Errorf("BUG: confine: encoding the spec: %w", err)
	}
	verb := runVerb
	if sp.Probe {
		verb = probeVerb
	}
	cmd.Path = l.exe
	cmd.Args = []string{l.exe, verb}
	cmd.Env = []string{specEnv + "=" + string(b)}
	cmd.Dir = sp.Dir
	cmd.SysProcAttr = sysProcAttr(sp.NS, sp.NetNS)
	return nil
}

// probeTimeout bounds the probe: the launcher's check and its starts in
// probe mode.
const probeTimeout = time.Minute

// sysProcAttr is how the launcher is started: a session of its own, and,
// with ns, new user, PID, mount and IPC namespaces (and a network one
// with netns) in which it keeps the capabilities it needs to mount and
// to bring the loopback up. The user namespace maps the daemon's own uid
// and gid to themselves (0 to 0 for root), so that agents that refuse to
// run as root see the real uid; it sets no Credential: setuid and
// setgroups are refused under the service's system call filter.
func sysProcAttr(ns, netns bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setsid: true}
	if !ns {
		return a
	}
	a.Cloneflags = unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNS | unix.CLONE_NEWIPC
	if netns {
		a.Cloneflags |= unix.CLONE_NEWNET
	}
	uid, gid := os.Geteuid(), os.Getegid()
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	a.GidMappingsEnableSetgroups = false
	// A non-zero uid loses its capabilities at the launcher's exec unless
	// they are ambient. CAP_SETPCAP lets the launcher drop the rest.
	a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP}
	return a
}

// noLayer is the report of a probe that could not run: no layer applied,
// each for the reason why.
func noLayer(why string) Report {
	var r Report
	for _, ly := range layers {
		r.set(ly, false, "%s", why)
	}
	return r
}

// runProbe runs the launcher in probe mode once, with the namespaces
// (ns) and the network namespace (netns) or without, and returns its
// report.
func (l *Launcher) runProbe(ctx context.Context, tmp string, ns, netns bool) (Report, error) {
	sp := l.probeSpec(tmp)
	sp.NS, sp.NetNS = ns, netns
	cmd := exec.CommandContext(ctx, l.exe)
	if err := l.rewrite(cmd, &sp); err != nil {
		return Report{}, err
	}
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return Report{}, fmt.Errorf("%w: %s", err, msg)
		}
		return Report{}, err
	}
	var r Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		return Report{}, fmt.Errorf("the launcher's report does not decode: %w (%q)", err, out.String())
	}
	return r, nil
}

// probeNamespaces probes with the namespaces, and the network's when
// wantNet; when the kernel refuses the network's, again without it
// (netErr says why). It sets l.ns and l.netns to what worked; nsErr says
// why the namespaces did not.
func (l *Launcher) probeNamespaces(ctx context.Context, tmp string, wantNet bool) (r Report, nsErr, netErr error) {
	r, nsErr = l.runProbe(ctx, tmp, true, wantNet)
	switch {
	case nsErr != nil && wantNet:
		netErr = nsErr
		if r, nsErr = l.runProbe(ctx, tmp, true, false); nsErr == nil {
			l.ns = true
		}
	case nsErr == nil:
		l.ns, l.netns = true, wantNet
	}
	return r, nsErr, netErr
}

// explainNamespaces records in r whether the namespaces and the network
// namespace are applied, and why not, and the layers that need them.
func (l *Launcher) explainNamespaces(r *Report, wantNS, wantNet bool, nsErr, netErr error) {
	switch {
	case l.ns:
		r.set(Namespaces, true, "user, pid, mount, ipc")
	case !wantNS:
		r.set(Namespaces, false, "disabled")
	default:
		r.set(Namespaces, false, "%v", nsErr)
	}
	if !l.ns {
		for _, ly := range []Layer{Hide, Proc} {
			r.set(ly, false, "needs the namespaces")
		}
	}
	if l.netns {
		return
	}
	why := "disabled"
	switch {
	case netErr != nil:
		why = netErr.Error()
	case !l.ns && wantNet:
		why = "needs the namespaces"
	}
	if r.Applied(Seccomp) {
		why += "; instead, local-only runs cannot open IPv4 or IPv6 sockets (seccomp)"
	}
	r.set(Network, false, "%s", why)
}

// probe chooses the launcher, then starts it in probe mode with every
// layer not disabled, then with fewer namespaces when the kernel refuses
// them, and records what it found in l.
func (l *Launcher) probe(ctx context.Context) Report {
	// The probe starts processes that do a few system calls and exit;
	// one that hangs (a kernel stuck in a mount) must not hold the
	// daemon's start for ever.
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	l.chooseLauncher(ctx)
	r := l.probeLayers(ctx)
	r.Launcher, r.Fallback = l.exe, l.fallback
	return r
}

// probeLayers is the probe of the layers, with the launcher chosen.
func (l *Launcher) probeLayers(ctx context.Context) Report {
	tmp, err := os.MkdirTemp(l.runs, "probe-")
	if err != nil {
		l.skip = slices.Clone(layers)
		return noLayer(fmt.Sprintf("no temporary directory for the probe: %v", err))
	}
	defer removeAll(tmp)
	wantNS := !slices.Contains(l.without, Namespaces)
	wantNet := wantNS && !slices.Contains(l.without, Network)
	var (
		r             Report
		nsErr, netErr error
	)
	if wantNS {
		r, nsErr, netErr = l.probeNamespaces(ctx, tmp, wantNet)
	}
	if !l.ns {
		var err error
		if r, err = l.runProbe(ctx, tmp, false, false); err != nil {
			l.skip = slices.Clone(layers)
			return noLayer(fmt.Sprintf("the launcher %s does not start: %v", l.exe, err))
		}
	}
	l.explainNamespaces(&r, wantNS, wantNet, nsErr, netErr)
	r = r.sorted()
	l.skip = slices.Clone(l.without)
	for _, s := range r.Missing() {
		l.skip = append(l.skip, s.Layer)
	}
	return r
}
