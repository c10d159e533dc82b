//go:build linux

package confine

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// agentEnv makes the test binary an agent that tries what its arguments
// say (agentMain).
const agentEnv = "QUESTBOX_CONFINE_TEST_AGENT"

// agentMain is the test agent: each argument is an attempt "verb:arg",
// and it prints one line per attempt, "verb:arg ok" or "verb:arg
// refused: <error>", then exits 0. With agentEnv "sleep" it waits until
// killed (a target, or a grandchild that must not outlive its run).
func agentMain() {
	if os.Getenv(agentEnv) == "sleep" {
		select {}
	}
	for _, a := range os.Args[1:] {
		verb, arg, _ := strings.Cut(a, ":")
		err := attempt(verb, arg)
		if err != nil {
			fmt.Printf("%s refused: %v\n", a, err)
		} else {
			fmt.Printf("%s ok\n", a)
		}
	}
	os.Exit(0)
}

// attempt does one thing an agent might try.
func attempt(verb, arg string) error {
	try, ok := attempts[verb]
	if !ok {
		return errors.New("unknown attempt " + verb)
	}
	return try(arg)
}

// attempts are what the test agent may try, by verb, each given its
// argument: a path, an address, a pid or what the verb says.
var attempts = map[string]func(arg string) error{
	"read": func(arg string) error { _, err := os.ReadFile(arg); return err },
	"list": func(arg string) error { _, err := os.ReadDir(arg); return err },
	"write": func(arg string) error {
		return os.WriteFile(arg, []byte("agent was here"), 0o644)
	},
	"link": func(arg string) error { // a hard link to arg in the working directory
		return os.Link(arg, "link-"+strconv.Itoa(os.Getpid()))
	},
	"symlink":    attemptSymlink,
	"signal":     func(arg string) error { return syscall.Kill(pidOf(arg), syscall.SIGTERM) },
	"ptrace":     attemptPtrace,
	"vmread":     func(arg string) error { return vmread(pidOf(arg)) },
	"getfd":      func(arg string) error { return getfd(pidOf(arg)) },
	"dial":       attemptDial,
	"dialunix":   attemptDialUnix,
	"socketpair": func(string) error { return attemptSocketpair() },
	"selfdial":   func(string) error { return attemptSelfDial() },
	"userns":     func(string) error { return syscall.Unshare(syscall.CLONE_NEWUSER) },
	"mount":      func(arg string) error { return syscall.Mount("none", arg, "tmpfs", 0, "") },
	"spawn":      attemptSpawn,
	"getenv": func(arg string) error {
		if _, ok := os.LookupEnv(arg); !ok {
			return errors.New("not set")
		}
		return nil
	},
	"fd": attemptFD,
}

// pidOf is the pid an attempt's argument names (0 when it names none).
func pidOf(arg string) int {
	pid, _ := strconv.Atoi(arg)
	return pid
}

// attemptSymlink reads arg through a symbolic link in the working
// directory.
func attemptSymlink(arg string) error {
	name := "sym-" + strconv.Itoa(os.Getpid())
	if err := os.Symlink(arg, name); err != nil {
		return err
	}
	_, err := os.ReadFile(name)
	return err
}

func attemptPtrace(arg string) error {
	pid := pidOf(arg)
	if err := syscall.PtraceAttach(pid); err != nil {
		return err
	}
	return syscall.PtraceDetach(pid)
}

func attemptDial(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return err
	}
	return c.Close()
}

func attemptDialUnix(path string) error {
	c, err := net.Dial("unix", path)
	if err != nil {
		return err
	}
	return c.Close()
}

func attemptSocketpair() error {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return err
	}
	syscall.Close(fds[0])
	return syscall.Close(fds[1])
}

// attemptSelfDial dials over the run's own loopback.
func attemptSelfDial() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	return attemptDial(ln.Addr().String())
}

// attemptSpawn starts a grandchild in a session of its own, left running.
func attemptSpawn(arg string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, "grandchild", arg)
	cmd.Env = []string{agentEnv + "=sleep"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd.Start()
}

// attemptFD checks "N/INODE": descriptor N is open on file INODE.
func attemptFD(arg string) error {
	n, ino, _ := strings.Cut(arg, "/")
	fd, _ := strconv.Atoi(n)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return err
	}
	if strconv.FormatUint(st.Ino, 10) != ino {
		return fmt.Errorf("descriptor %d is another file", fd)
	}
	return nil
}
