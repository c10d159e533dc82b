package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock access rights, by what they allow.
const (
	llRead = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR |
		unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX
	llWrite = llRead | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
		unix.LANDLOCK_ACCESS_FS_MAKE_REG | unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO |
		unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK | unix.LANDLOCK_ACCESS_FS_MAKE_SYM | unix.LANDLOCK_ACCESS_FS_REFER |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE
	// llDevice is what a run may do to the few devices it needs.
	llDevice = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	// llFile are the rights that apply to a file that is not a directory.
	llFile = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
)

// llHandled is every file system right Landlock ABI abi knows: the ones
// a ruleset handles, which are then denied wherever no rule allows them.
func llHandled(abi int) uint64 {
	h := uint64(unix.LANDLOCK_ACCESS_FS_MAKE_SYM<<1 - 1) // ABI 1: EXECUTE … MAKE_SYM
	if abi >= 2 {
		h |= unix.LANDLOCK_ACCESS_FS_REFER // else linking and renaming across directories is always denied
	}
	if abi >= 3 {
		h |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		// Device ioctls: a run cannot drive the box's GPIO lines or any
		// other device through a descriptor it opens.
		h |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	if abi >= llResolveUnixABI {
		// Connecting to a pathname unix socket: the control socket.
		h |= unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX
	}
	return h
}

// llResolveUnixABI is the first Landlock ABI that rules connections to
// pathname unix sockets.
const llResolveUnixABI = 9

// devices are the device files a run may read and write; every other
// file under /dev is out of reach (a raw disk would bypass every rule on
// paths for a run that runs as the disk's owner).
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// rulesetAttr is struct landlock_ruleset_attr up to ABI 6; the kernel
// takes a longer struct than it knows as long as the rest is zero.
type rulesetAttr struct {
	fs, net, scoped uint64
}

// landlockABI is the kernel's Landlock ABI version, or why there is none.
func landlockABI() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		switch errno {
		case unix.ENOSYS:
			return 0, errors.New("the kernel has no Landlock")
		case unix.EOPNOTSUPP:
			return 0, errors.New("Landlock is not enabled at boot (lsm=)")
		}
		return 0, errno
	}
	return int(v), nil
}

// restrict applies the run's Landlock ruleset with the best ABI the
// kernel has: it may write only sp.Write; it may read and execute
// everything but the hidden paths (and /dev but a few devices); from ABI
// 6 it may not signal nor connect to an abstract unix socket outside the
// run; from ABI 4, a run with neither network nor a network namespace
// may not bind or connect TCP. Landlock also refuses to let the run
// ptrace (or read the /proc entries of) a process outside it.
func restrict(sp *spec) (abi int, detail string, err error) {
	abi, err = landlockABI()
	if err != nil {
		return 0, "", err
	}
	attr := rulesetAttr{fs: llHandled(abi)}
	if !sp.Network && !sp.NetNS && abi >= 4 {
		attr.net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	if abi >= 6 {
		attr.scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return abi, "", fmt.Errorf("creating the ruleset: %w", errno)
	}
	ruleset := int(fd)
	defer unix.Close(ruleset)
	allow := func(path string, access uint64, dir bool) error {
		if !dir {
			access &= llFile
		}
		access &= attr.fs
		if access == 0 {
			return nil
		}
		pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(pfd)
		rule := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(pfd)}
		_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH,
			uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
		if errno != 0 {
			return fmt.Errorf("rule for %s: %w", path, errno)
		}
		return nil
	}
	readable := readRoots(slices.Concat(sp.Hidden, sp.Private, []string{"/dev"}))
	for _, e := range readable {
		// A path that vanished since it was listed, or that the run's
		// user cannot even name, gets no rule: less access, not more.
		_ = allow(e.path, llRead, e.dir)
	}
	for _, d := range devices {
		if err := allow(d, llDevice, false); err != nil && !errors.Is(err, unix.ENOENT) {
			return abi, "", err
		}
	}
	for _, w := range sp.Write {
		if err := allow(w, llWrite, true); err != nil {
			return abi, "", fmt.Errorf("writable %s: %w", w, err)
		}
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0); errno != 0 {
		return abi, "", fmt.Errorf("restrict_self: %w", errno)
	}
	detail = fmt.Sprintf("ABI %d", abi)
	if abi < 6 {
		detail += "; no signal or abstract socket scope before ABI 6"
	}
	return abi, detail, nil
}

// root is a path a run may read beneath.
type root struct {
	path string
	dir  bool
}

// readRoots is what a run may read given the hidden paths: Landlock only
// allows, so the hidden paths are left out by allowing, in each of their
// ancestors, every entry that is neither hidden nor an ancestor of a
// hidden path. The ancestors themselves get no rule (they can be walked
// through, not listed). A symbolic link gets no rule of its own: what it
// points to is checked where it is.
func readRoots(hidden []string) []root {
	hid := map[string]bool{}
	anc := map[string]bool{}
	for _, h := range outermost(hidden) {
		hid[h] = true
		for p := filepath.Dir(h); ; p = filepath.Dir(p) {
			anc[p] = true
			if p == "/" || p == "." {
				break
			}
		}
	}
	var out []root
	for a := range anc {
		ents, err := os.ReadDir(a)
		if err != nil {
			continue
		}
		for _, e := range ents {
			p := filepath.Join(a, e.Name())
			if hid[p] || anc[p] || e.Type()&os.ModeSymlink != 0 {
				continue
			}
			out = append(out, root{p, e.IsDir()})
		}
	}
	return out
}

// outermost is the hidden paths, cleaned, without those that lie in
// another: a hidden directory hides all it holds, so a hidden file in it
// (the control socket in the data directory) must not make the directory
// an ancestor whose other entries are allowed one by one.
func outermost(hidden []string) []string {
	clean := make([]string, len(hidden))
	for i, h := range hidden {
		clean[i] = filepath.Clean(h)
	}
	var out []string
	for _, h := range clean {
		inside := false
		for _, o := range clean {
			inside = inside || (o != h && (o == "/" || strings.HasPrefix(h, o+"/")))
		}
		if !inside && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}
