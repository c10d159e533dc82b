package confine

import (
	"fmt"
	"strings"
)

// Layer names one protection a run gets. Its value is the name the start
// log, the probe's report and `questbox selftest` print.
type Layer string

// The layers, in the order they are reported.
const (
	// Session: the run starts a new session (no controlling terminal) and
	// leads its own process group, which the daemon kills as a whole.
	Session Layer = "session"
	// Descriptors: no descriptor of the daemon's but stdin, stdout and
	// stderr reaches the agent.
	Descriptors Layer = "descriptors"
	// Environment: the agent's environment is exactly the one its
	// provider's allow-list built.
	Environment Layer = "environment"
	// NoNewPrivs: no set-user-ID program or file capability gives the run
	// more privilege than it started with.
	NoNewPrivs Layer = "no_new_privs"
	// Landlock: file system rules (writes only in the run's directories,
	// no access at all to the hidden paths) and, from Landlock ABI 6, no
	// signal and no abstract unix socket outside the run.
	Landlock Layer = "landlock"
	// Seccomp: the system calls that reach other processes or the
	// kernel's configuration are refused.
	Seccomp Layer = "seccomp"
	// Namespaces: new user, PID, mount and IPC namespaces; the agent is
	// PID 1 of its own namespace, so every process it starts ends with it.
	Namespaces Layer = "namespaces"
	// Network: a run that may reach only local vendors gets a network
	// namespace with nothing but its own loopback.
	Network Layer = "network namespace"
	// Hide: the hidden paths are covered by empty read-only mounts.
	Hide Layer = "hidden mounts"
	// Proc: /proc shows only the run's own processes.
	Proc Layer = "private /proc"
	// Capabilities: the run holds no capability and cannot gain one.
	Capabilities Layer = "capabilities"
)

// layers is every Layer in report order.
var layers = []Layer{Session, Descriptors, Environment, NoNewPrivs, Landlock, Seccomp,
	Namespaces, Network, Hide, Proc, Capabilities}

// Status is what became of one layer: applied (Detail says how, e.g.
// "ABI 7"), or not (Detail says why, in the kernel's words).
type Status struct {
	Layer   Layer  `json:"layer"`
	Applied bool   `json:"applied"`
	Detail  string `json:"detail,omitempty"`
}

func (s Status) String() string {
	if s.Detail == "" {
		return string(s.Layer)
	}
	return string(s.Layer) + " (" + s.Detail + ")"
}

// Report says which layers a run gets on this machine, one Status per
// layer in a fixed order, and which launcher applies them.
type Report struct {
	Layers []Status `json:"layers"`
	// Launcher is the program each run starts first, which confines
	// itself and execs the agent: the small launcher ([LauncherName]
	// beside the daemon's executable), or the daemon's executable
	// itself. Empty where runs are not confined (not Linux).
	Launcher string `json:"launcher,omitempty"`
	// Fallback says why Launcher is the daemon's executable rather than
	// the small launcher: it is missing, does not answer, or is of
	// another build. The runs are confined alike either way; each
	// costs more, as it starts the larger binary.
	Fallback string `json:"fallback,omitempty"`
}

// Missing is the layers that are not applied.
func (r Report) Missing() []Status {
	var out []Status
	for _, s := range r.Layers {
		if !s.Applied {
			out = append(out, s)
		}
	}
	return out
}

// Applied reports whether layer l is applied.
func (r Report) Applied(l Layer) bool {
	for _, s := range r.Layers {
		if s.Layer == l {
			return s.Applied
		}
	}
	return false
}

// Complete reports whether every layer is applied.
func (r Report) Complete() bool { return len(r.Layers) > 0 && len(r.Missing()) == 0 }

// String names every layer applied and every one not applied with its
// reason, and the launcher, in one line:
//
//	applied: session, …, landlock (ABI 7), …; NOT applied: network namespace (clone: operation not permitted); launcher /usr/bin/questbox-confine
//	applied: session, …; launcher /usr/bin/questbox (not /usr/bin/questbox-confine: it is missing)
func (r Report) String() string {
	var on, off []string
	for _, s := range r.Layers {
		if s.Applied {
			on = append(on, s.String())
		} else {
			off = append(off, s.String())
		}
	}
	if len(on) == 0 {
		on = []string{"none"}
	}
	out := "applied: " + strings.Join(on, ", ")
	if len(off) > 0 {
		out += "; NOT applied: " + strings.Join(off, ", ")
	}
	if r.Launcher != "" {
		out += "; launcher " + r.Launcher
		if r.Fallback != "" {
			out += " (" + r.Fallback + ")"
		}
	}
	return out
}

// set records layer l's status in r, replacing an earlier one.
func (r *Report) set(l Layer, applied bool, format string, args ...any) {
	s := Status{Layer: l, Applied: applied, Detail: fmt.Sprintf(format, args...)}
	for i := range r.Layers {
		if r.Layers[i].Layer == l {
			r.Layers[i] = s
			return
		}
	}
	r.Layers = append(r.Layers, s)
}

// sorted returns r with its layers in report order.
func (r Report) sorted() Report {
	out := Report{Launcher: r.Launcher, Fallback: r.Fallback}
	for _, l := range layers {
		for _, s := range r.Layers {
			if s.Layer == l {
				out.Layers = append(out.Layers, s)
			}
		}
	}
	return out
}
