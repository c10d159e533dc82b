package agent

import (
	"os"

	"golang.org/x/sys/unix"
)

// prefill writes prompt into w, the empty stdin pipe of a child not yet
// started, if the pipe's buffer (64 KiB by default) holds all of it, and
// reports whether it did. Nothing reads the pipe yet, so a write that did
// not fit would block. The pipe is not grown for a longer prompt: a
// thousand runs in flight would pin that much kernel memory, where the
// writer goroutine such a prompt gets instead costs a few KiB.
func prefill(w *os.File, prompt string) bool {
	if len(prompt) == 0 {
		return true
	}
	rc, err := w.SyscallConn()
	if err != nil {
		return false
	}
	fits := false
	_ = rc.Control(func(fd uintptr) {
		size, err := unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0)
		fits = err == nil && size >= len(prompt)
	})
	if !fits {
		return false
	}
	n, err := w.WriteString(prompt)
	return err == nil && n == len(prompt)
}

// waitExited returns once the process pid has exited (it stays to be
// reaped by Wait), parked on the runtime's poller: a pidfd is readable
// once its process exits. os.Process.Wait would hold an OS thread in
// waitid(2) for the whole run, and a busy tick has a thousand runs in
// flight. Without pidfds (Linux before 5.10's PIDFD_NONBLOCK) it returns
// at once and Wait blocks as before.
func waitExited(pid int) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Read(func(fd uintptr) bool {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		return err != nil || info.Signo != 0
	})
}
