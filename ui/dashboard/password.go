package dashboard

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// The password file holds the bcrypt hash of the dashboard's password and
// the key that signs session cookies and CSRF tokens, one per line:
//
//	# questbox dashboard credentials ...
//	bcrypt $2a$10$...
//	session-key 5f0c...(64 hex digits)
//
// It is written atomically with mode 0600, and kept so (EnsurePassword):
// the session key is a bearer secret. A new password always comes with a
// new session key, so `questbox password` logs every session out.

// MinPassword is the shortest password SetPassword accepts.
const MinPassword = 8

// ErrNoPassword is returned when the password file does not exist.
var ErrNoPassword = errors.New("no dashboard password is set")

// passwordAlphabet has no look-alikes (0/o, 1/l/i): the password is read
// off a log and typed on a phone.
const passwordAlphabet = "abcdefghjkmnpqrstuvwxyz23456789"

// NewPassword returns a random password of four groups of four characters
// (about 79 bits), e.g. "k7wq-3mzp-x9fd-2hrt".
func NewPassword() string {
	var chars []byte
	buf := make([]byte, 32)
	for len(chars) < 16 {
		if _, err := rand.Read(buf); err != nil {
			panic("BUG: crypto/rand failed: " + err.Error())
		}
		for _, c := range buf {
			// Rejection sampling keeps every character equally likely.
			if int(c) < 256/len(passwordAlphabet)*len(passwordAlphabet) && len(chars) < 16 {
				chars = append(chars, passwordAlphabet[int(c)%len(passwordAlphabet)])
			}
		}
	}
	return string(chars[0:4]) + "-" + string(chars[4:8]) + "-" + string(chars[8:12]) + "-" + string(chars[12:16])
}

// SetPassword replaces the password file at path with password's hash and
// a fresh session key. Run as root, it gives the file to the owner of its
// directory (the daemon's user), so that `sudo questbox password` works.
func SetPassword(path, password string) error {
	return writeCredentials(path, password, bcrypt.DefaultCost)
}

// Ensured is what EnsurePassword did.
type Ensured struct {
	// Generated: there was no password file; one was made with a
	// generated password, written to the first-password file.
	Generated bool
	// Tightened is the mode the password file had when others than its
	// owner could read or write it (it is 0600 now); 0 when it was
	// owner-only.
	Tightened fs.FileMode
}

// EnsurePassword makes sure the password file at path exists and only its
// owner may read it: the session key in it is a bearer secret, with which
// anyone forges a valid session cookie. When there is no file it creates
// one with a generated password, and writes that password, in clear, to
// first (mode 0600 as well), for the owner to read: never to a log, which
// other processes (an agent through /proc, a journal reader) may see. A
// file others could read or write is made owner-only and reported: its
// session key may have been read, and only a new password (`questbox
// password`) makes a new one.
func EnsurePassword(path, first string) (Ensured, error) {
	fi, err := os.Stat(path)
	switch {
	case err == nil:
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			if err := os.Chmod(path, perm&0o700); err != nil {
				return Ensured{}, fmt.Errorf("dashboard password file %s is mode %04o, readable by others than its owner, and cannot be made 0600: %w", path, perm, err)
			}
			return Ensured{Tightened: perm}, nil
		}
		return Ensured{}, nil
	case !errors.Is(err, fs.ErrNotExist):
		return Ensured{}, fmt.Errorf("dashboard password file: %w", err)
	}
	pw := NewPassword()
	// The clear password first: a file of credentials whose password
	// nobody can read would lock the owner out.
	if err := writeAtomic(first, []byte(pw+"\n")); err != nil {
		return Ensured{}, err
	}
	if err := SetPassword(path, pw); err != nil {
		return Ensured{}, err
	}
	return Ensured{Generated: true}, nil
}

// ForgetFirstPassword removes the first-password file EnsurePassword
// wrote: it no longer holds the password once a new one is set.
func ForgetFirstPassword(first string) error {
	if err := os.Remove(first); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("dashboard first-password file: %w", err)
	}
	return nil
}

func writeCredentials(path, password string, cost int) error {
	if len(password) < MinPassword {
		return fmt.Errorf("the password must be at least %d characters", MinPassword)
	}
	if len(password) > 72 {
		return fmt.Errorf("the password must be at most 72 bytes (bcrypt's limit)")
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		return fmt.Errorf("hash the password: %w", err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# questbox dashboard credentials, written %s; `questbox password` replaces them\n", time.Now().UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "bcrypt %s\nsession-key %s\n", hash, hex.EncodeToString(key))
	return writeAtomic(path, b.Bytes())
}

// writeAtomic writes data to path through a temporary file in the same
// directory (mode 0600), fsynced and renamed over path.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("dashboard password file: %w", err)
	}
	f, err := os.CreateTemp(dir, ".dashboard-password-*")
	if err != nil {
		return fmt.Errorf("dashboard password file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if os.Geteuid() == 0 {
		// Root resetting the daemon's password: the file belongs to whoever
		// owns the data directory (the daemon's user), or it could not read it.
		if fi, err := os.Stat(dir); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				if err := f.Chown(int(st.Uid), int(st.Gid)); err != nil {
					f.Close()
					return fmt.Errorf("dashboard password file: %w", err)
				}
			}
		}
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("dashboard password file: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("dashboard password file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("dashboard password file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("dashboard password file: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// credentials are the contents of the password file.
type credentials struct {
	hash []byte // bcrypt
	key  []byte // signs sessions and CSRF tokens
}

func parseCredentials(path string, data []byte) (*credentials, error) {
	c := &credentials{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		k, v, _ := strings.Cut(text, " ")
		switch k {
		case "bcrypt":
			c.hash = []byte(strings.TrimSpace(v))
		case "session-key":
			key, err := hex.DecodeString(strings.TrimSpace(v))
			if err != nil || len(key) < 16 {
				return nil, fmt.Errorf("%s:%d: session-key is not at least 32 hex digits", path, line)
			}
			c.key = key
		default:
			return nil, fmt.Errorf("%s:%d: unknown line %q", path, line, k)
		}
	}
	if _, err := bcrypt.Cost(c.hash); err != nil || c.key == nil {
		return nil, fmt.Errorf("%s is not a questbox password file (reset it with `questbox password`)", path)
	}
	return c, nil
}

// passwordFile reads the password file again whenever it changes on disk:
// `questbox password` works with or without a running daemon, and the
// daemon notices at the next request.
type passwordFile struct {
	path string

	mu    sync.Mutex // guards the fields below
	stamp fileStamp
	cred  *credentials
	err   error
}

// fileStamp identifies one version of a file.
type fileStamp struct {
	ino, size uint64
	mtime     time.Time
}

func stampOf(fi fs.FileInfo) fileStamp {
	s := fileStamp{size: uint64(fi.Size()), mtime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ino = st.Ino
	}
	return s
}

// get returns the current credentials. A missing or unreadable file is an
// error: then nobody can log in, which is the safe way to fail.
func (p *passwordFile) get() (*credentials, error) {
	fi, err := os.Stat(p.path)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.cred, p.stamp = nil, fileStamp{}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w (run `questbox password`)", p.path, ErrNoPassword)
		}
		return nil, err
	}
	if st := stampOf(fi); st != p.stamp || (p.cred == nil && p.err == nil) {
		data, err := os.ReadFile(p.path)
		p.stamp = st
		if err == nil {
			p.cred, p.err = parseCredentials(p.path, data)
		} else {
			p.cred, p.err = nil, err
		}
	}
	return p.cred, p.err
}
