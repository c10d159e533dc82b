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
	pid, _ := strconv.Atoi(arg)
	switch verb {
	case "read":
		_, err := os.ReadFile(arg)
		return err
	case "list":
		_, err := os.ReadDir(arg)
		return err
	case "write":
		return os.WriteFile(arg, []byte("agent was here"), 0o644)
	case "link": // a hard link to arg in the working directory
		return os.Link(arg, "link-"+strconv.Itoa(os.Getpid()))
	case "symlink": // read arg through a symbolic link in the working directory
		name := "sym-" + strconv.Itoa(os.Getpid())
		if err := os.Symlink(arg, name); err != nil {
			return err
		}
		_, err := os.ReadFile(name)
		return err
	case "signal":
		return syscall.Kill(pid, syscall.SIGTERM)
	case "ptrace":
		if err := syscall.PtraceAttach(pid); err != nil {
			return err
		}
		return syscall.PtraceDetach(pid)
	case "vmread":
		return vmread(pid)
	case "getfd":
		return getfd(pid)
	case "dial":
		c, err := net.DialTimeout("tcp", arg, 10*time.Second)
		if err != nil {
			return err
		}
		return c.Close()
	case "dialunix":
		c, err := net.Dial("unix", arg)
		if err != nil {
			return err
		}
		return c.Close()
	case "socketpair":
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			return err
		}
		syscall.Close(fds[0])
		return syscall.Close(fds[1])
	case "selfdial": // over the run's own loopback
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		defer ln.Close()
		return attempt("dial", ln.Addr().String())
	case "userns":
		return syscall.Unshare(syscall.CLONE_NEWUSER)
	case "mount":
		return syscall.Mount("none", arg, "tmpfs", 0, "")
	case "spawn": // a grandchild in a session of its own, left running
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		cmd := exec.Command(exe, "grandchild", arg)
		cmd.Env = []string{agentEnv + "=sleep"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		return cmd.Start()
	case "getenv":
		if _, ok := os.LookupEnv(arg); !ok {
			return errors.New("not set")
		}
		return nil
	case "fd": // "N/INODE": descriptor N is open on file INODE
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
	return errors.New("unknown attempt " + verb)
}
