package confine

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// denied are the system calls a run is refused (EPERM), and why. None is
// needed to do work in a directory; each reaches another process, the
// kernel's configuration or a namespace, or widens the kernel's surface.
var denied = []struct{ name, why string }{
	// Reading or changing another process's memory, descriptors or
	// state, which Landlock also refuses outside the run's domain.
	{"ptrace", "trace or inject into another process"},
	{"process_vm_readv", "read another process's memory"},
	{"process_vm_writev", "write another process's memory"},
	{"pidfd_getfd", "take a descriptor out of another process"},
	{"kcmp", "compare another process's descriptors and memory"},
	// The kernel's own configuration and attack surface.
	{"bpf", "load programs into the kernel"},
	{"perf_event_open", "observe other processes and the kernel"},
	{"kexec_load", "replace the running kernel"},
	{"kexec_file_load", "replace the running kernel"},
	{"init_module", "load a kernel module"},
	{"finit_module", "load a kernel module"},
	{"delete_module", "unload a kernel module"},
	{"userfaultfd", "stall the kernel at will, a staple of kernel exploits"},
	{"io_uring_setup", "io_uring runs system calls this filter never sees"},
	{"io_uring_enter", "io_uring runs system calls this filter never sees"},
	{"io_uring_register", "io_uring runs system calls this filter never sees"},
	// Mounts: a run keeps the view of the file system it was given.
	{"mount", "change the file system's view"},
	{"umount", "uncover a hidden path"},
	{"umount2", "uncover a hidden path"},
	{"pivot_root", "change the file system's root"},
	{"move_mount", "change the file system's view"},
	{"open_tree", "copy a mount"},
	{"open_tree_attr", "copy a mount"},
	{"fsopen", "make a mount"},
	{"fsmount", "make a mount"},
	{"fsconfig", "make a mount"},
	{"fspick", "reconfigure a mount"},
	{"mount_setattr", "make a read-only mount writable"},
	// Keys: the kernel keyring is shared by the user's processes.
	{"keyctl", "read or change the user's kernel keys"},
	{"add_key", "change the user's kernel keys"},
	{"request_key", "read the user's kernel keys"},
	// Namespaces: entering another one; making a user namespace (below)
	// would give the run every capability inside it.
	{"setns", "enter another process's namespace"},
}

// sysnums are the system call numbers of one architecture's ABI, by name.
type sysnums struct {
	audit uint32 // AUDIT_ARCH_*
	nr    map[string]uint32
	x32   bool // x86-64: system calls with bit 30 set are x32's
}

// archs are the ABIs a process of this GOARCH may meet: its own and the
// other one the same kernel runs (a 32-bit ARM build on a 64-bit Pi
// kernel may exec a 64-bit agent, and the reverse).
func archs() []sysnums {
	switch runtime.GOARCH {
	case "amd64", "386":
		return []sysnums{x8664, i386}
	case "arm64", "arm":
		return []sysnums{aarch64, arm}
	}
	return nil
}

// filter installs the run's seccomp filter on every thread. Calls of an
// ABI it does not know kill the process: their numbers mean other calls.
// With noInet (no network and no network namespace) it also refuses
// IPv4, IPv6 and packet sockets, the egress rule where the kernel gives
// no network namespace; with noUnix, unix sockets, where nothing else
// keeps a run from connecting to the control socket; with oneGroup,
// setsid and setpgid succeed without doing anything, where no PID
// namespace ends a run's processes with it: every process the run
// starts stays in the launcher's process group, which is killed when
// the run ends, so none can outlive it by leaving the group.
func filter(noInet, noUnix, oneGroup bool) (string, error) {
	prog, err := program(archs(), noInet, noUnix, oneGroup)
	if err != nil {
		return "", err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC,
		uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		// A service manager's own filter may refuse seccomp(2) (it is
		// not in every @system-service). prctl sets the filter on this
		// thread only, which is the thread that execs the agent.
		if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
			return "", fmt.Errorf("seccomp: %v; prctl: %w", errno, err)
		}
	}
	detail := fmt.Sprintf("%d system calls refused", len(denied)+1)
	if noInet {
		detail += ", no IPv4 or IPv6 sockets"
	}
	if noUnix {
		detail += ", no unix sockets"
	}
	if oneGroup {
		detail += ", no leaving the run's process group"
	}
	return detail, nil
}

// Offsets in struct seccomp_data.
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16 // the low 32 bits on these little-endian ABIs
)

// asm assembles a classic BPF program with named jump targets.
type asm struct {
	prog   []unix.SockFilter
	labels map[string]int
	jumps  map[int][2]string // instruction → its true and false targets
}

func (a *asm) emit(code uint16, k uint32) {
	a.prog = append(a.prog, unix.SockFilter{Code: code, K: k})
}

func (a *asm) load(off uint32) { a.emit(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, off) }
func (a *asm) ret(k uint32)    { a.emit(unix.BPF_RET|unix.BPF_K, k) }
func (a *asm) label(n string)  { a.labels[n] = len(a.prog) }

// jump emits a conditional jump (op is BPF_JEQ, BPF_JGE or BPF_JSET) to
// label yes when it holds, else on.
func (a *asm) jump(op uint16, k uint32, yes string) {
	a.jumps[len(a.prog)] = [2]string{yes, ""}
	a.emit(unix.BPF_JMP|op|unix.BPF_K, k)
}

func (a *asm) resolve() ([]unix.SockFilter, error) {
	for i, t := range a.jumps {
		to, ok := a.labels[t[0]]
		if !ok {
			return nil, fmt.Errorf("BUG: seccomp: no label %q", t[0])
		}
		off := to - i - 1
		if off < 0 || off > 255 {
			return nil, fmt.Errorf("BUG: seccomp: jump to %q out of range (%d)", t[0], off)
		}
		a.prog[i].Jt = uint8(off)
	}
	return a.prog, nil
}

// program is the filter for the ABIs as: per ABI, the denied calls
// (EPERM), clone3 (ENOSYS, so that the C library falls back to clone,
// whose flags can be read), clone and unshare with CLONE_NEWUSER (EPERM),
// with noInet socket for AF_INET, AF_INET6 or AF_PACKET and with noUnix
// socket for AF_UNIX (EPERM), with either socketcall (ENOSYS, its
// arguments cannot be read), and with oneGroup setsid and setpgid (no-op
// success: a program that detaches its children keeps working).
func program(as []sysnums, noInet, noUnix, oneGroup bool) ([]unix.SockFilter, error) {
	if len(as) == 0 {
		return nil, fmt.Errorf("no system call table for %s", runtime.GOARCH)
	}
	a := &asm{labels: map[string]int{}, jumps: map[int][2]string{}}
	const (
		eperm  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		enosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	)
	a.load(offArch)
	for _, s := range as {
		a.jump(unix.BPF_JEQ, s.audit, fmt.Sprint("arch", s.audit))
	}
	a.ret(unix.SECCOMP_RET_KILL_PROCESS)
	for _, s := range as {
		p := fmt.Sprint(s.audit, ".")
		a.label(fmt.Sprint("arch", s.audit))
		a.load(offNr)
		if s.x32 {
			a.jump(unix.BPF_JGE, 0x40000000, p+"eperm")
		}
		for _, d := range denied {
			if nr, ok := s.nr[d.name]; ok {
				a.jump(unix.BPF_JEQ, nr, p+"eperm")
			}
		}
		if oneGroup {
			a.jump(unix.BPF_JEQ, s.nr["setsid"], p+"noop")
			a.jump(unix.BPF_JEQ, s.nr["setpgid"], p+"noop")
		}
		a.jump(unix.BPF_JEQ, s.nr["clone3"], p+"enosys")
		a.jump(unix.BPF_JEQ, s.nr["clone"], p+"flags")
		a.jump(unix.BPF_JEQ, s.nr["unshare"], p+"flags")
		if noInet || noUnix {
			a.jump(unix.BPF_JEQ, s.nr["socket"], p+"socket")
			if nr, ok := s.nr["socketcall"]; ok {
				a.jump(unix.BPF_JEQ, nr, p+"enosys")
			}
		}
		a.ret(unix.SECCOMP_RET_ALLOW)
		a.label(p + "flags")
		a.load(offArg0)
		a.jump(unix.BPF_JSET, unix.CLONE_NEWUSER, p+"eperm")
		a.ret(unix.SECCOMP_RET_ALLOW)
		if noInet || noUnix {
			a.label(p + "socket")
			a.load(offArg0)
			if noInet {
				for _, af := range []uint32{unix.AF_INET, unix.AF_INET6, unix.AF_PACKET} {
					a.jump(unix.BPF_JEQ, af, p+"eperm")
				}
			}
			if noUnix {
				a.jump(unix.BPF_JEQ, unix.AF_UNIX, p+"eperm")
			}
			a.ret(unix.SECCOMP_RET_ALLOW)
		}
		a.label(p + "eperm")
		a.ret(eperm)
		a.label(p + "enosys")
		a.ret(enosys)
		if oneGroup {
			a.label(p + "noop")
			a.ret(unix.SECCOMP_RET_ERRNO) // errno 0: returns 0, does nothing
		}
	}
	return a.resolve()
}
