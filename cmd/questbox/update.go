package main

// questbox update FILE|URL: a signed release is checked (release.Check),
// staged in the data directory (package update) and the daemon is asked
// to restart into it (SIGHUP; it exits with exitRestart, which the unit's
// RestartForceExitStatus restarts). The daemon runs the trial and commits
// it (internal/daemon's update.go).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/questbox/questbox/internal/daemon"
	"github.com/questbox/questbox/internal/release"
)

const (
	// exitRestart is the daemon's exit status when it stops to start a
	// staged release (daemon.ExitRestart).
	exitRestart = daemon.ExitRestart
	// maxRelease bounds a release binary read from a file or a URL.
	maxRelease = 128 << 20
)

// updateCmd is `update FILE|URL`.
type updateCmd struct {
	sig, key string
}

func (c *updateCmd) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.sig, "sig", "", "the minisign signature (default: FILE.minisig or URL.minisig)")
	fs.StringVar(&c.key, "key", "", "the release public key (default: release.pub beside the config file, /etc/questbox/release.pub)")
}

func (c *updateCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("update", args, "FILE|URL"); err != nil {
		return err
	}
	src := args[0]
	sigSrc := c.sig
	if sigSrc == "" {
		sigSrc = src + ".minisig"
	}
	key := c.key
	if key == "" {
		key = e.daemonEnv().ReleaseKeyPath()
	}
	pub, err := release.ReadPublicKey(key)
	if err != nil {
		return usagef("update: %v", err)
	}
	bin, err := fetch(ctx, src, maxRelease)
	if err != nil {
		return usagef("update: %v", err)
	}
	sig, err := fetch(ctx, sigSrc, 64<<10)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return usagef("update: the signature: %v", err)
	}
	d, err := e.daemonEnv().UpdateDir()
	if err != nil {
		return err
	}
	r, _, err := d.Install(pub, release.Host(), bin, sig)
	if err != nil {
		return usagef("update: %s refused, nothing changed: %v", src, err)
	}
	fmt.Fprintf(e.stdout, "questbox %s (%s) verified and staged; ", r.Version, r.Target)
	pid, err := daemonPID(e.cfg.SocketPath())
	if err != nil {
		fmt.Fprintln(e.stdout, "no daemon runs: it starts on trial at the next start")
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
		return fmt.Errorf("update: ask the daemon (pid %d) to restart: %w", pid, err)
	}
	fmt.Fprintln(e.stdout, "the daemon restarts into it; it is kept once ready and healthy for the settling time, else the previous version comes back (questbox version shows which)")
	return nil
}

// fetch reads a file, or GETs an http(s) URL, of at most limit bytes. A
// missing file or a 404 is os.ErrNotExist.
func fetch(ctx context.Context, src string, limit int64) ([]byte, error) {
	var r io.Reader
	if strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://") {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
		if err != nil {
			return nil, err
		}
		resp, err := (&http.Client{Timeout: 10 * time.Minute}).Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			return nil, fmt.Errorf("%s: %w", src, os.ErrNotExist)
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s: %s", src, resp.Status)
		}
		r = resp.Body
	} else {
		f, err := os.Open(src)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", src, limit)
	}
	return b, nil
}

// daemonPID is the pid of the daemon serving the control socket sock,
// from the socket's peer credentials.
func daemonPID(sock string) (int, error) {
	c, err := net.DialTimeout("unix", sock, time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	raw, err := c.(*net.UnixConn).SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if cerr != nil {
		return 0, cerr
	}
	return int(cred.Pid), nil
}
