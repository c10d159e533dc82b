// Command questbox-release signs questbox release binaries (make release).
//
//	questbox-release keygen DIR           a new key pair: DIR/release.key (secret, 0600) and DIR/release.pub
//	questbox-release sign --version V FILE...   FILE.minisig for each FILE, with the key QUESTBOX_RELEASE_KEY names
//	questbox-release pub OUT              the public key of QUESTBOX_RELEASE_KEY, written to OUT
//
// The secret key is never in the repository: QUESTBOX_RELEASE_KEY is the
// path of a minisign secret key file, unencrypted or encrypted with the
// password in QUESTBOX_RELEASE_KEY_PASSWORD. Debian's minisign checks the
// signatures by hand: minisign -Vm FILE -p release.pub.
package main

import (
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"aead.dev/minisign"

	"github.com/questbox/questbox/internal/release"
)

func main() {
	if err := run(os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "questbox-release: %v\n", err)
		os.Exit(1)
	}
}

const usage = "usage: questbox-release keygen DIR | sign --version V FILE... | pub OUT"

func run(args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	switch args[0] {
	case "keygen":
		if len(args) != 2 {
			return errors.New(usage)
		}
		return keygen(args[1], stdout)
	case "sign":
		fs := flag.NewFlagSet("sign", flag.ContinueOnError)
		version := fs.String("version", "", "the version the binaries were built as (-X main.version)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		key, err := secretKey(getenv)
		if err != nil {
			return err
		}
		for _, f := range fs.Args() {
			if err := sign(key, f, *version, stdout); err != nil {
				return err
			}
		}
		return nil
	case "pub":
		if len(args) != 2 {
			return errors.New(usage)
		}
		key, err := secretKey(getenv)
		if err != nil {
			return err
		}
		return writePublic(args[1], key.Public().(minisign.PublicKey))
	}
	return errors.New(usage)
}

func secretKey(getenv func(string) string) (minisign.PrivateKey, error) {
	path := getenv("QUESTBOX_RELEASE_KEY")
	if path == "" {
		return minisign.PrivateKey{}, errors.New("QUESTBOX_RELEASE_KEY is not set: it names the release's minisign secret key file (see the README, \"Releases\")")
	}
	return release.ReadPrivateKey(path, getenv("QUESTBOX_RELEASE_KEY_PASSWORD"))
}

func sign(key minisign.PrivateKey, file, version string, stdout io.Writer) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	sig, r, err := release.Sign(key, b, version)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if err := os.WriteFile(file+".minisig", sig, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s.minisig: %s\n", file, r.Comment())
	return nil
}

func keygen(dir string, stdout io.Writer) error {
	pub, priv, err := minisign.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	b, err := priv.MarshalText()
	if err != nil {
		return err
	}
	secret := filepath.Join(dir, "release.key")
	f, err := os.OpenFile(secret, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := writePublic(filepath.Join(dir, "release.pub"), pub); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s (secret: keep it off the repository) and %s, key id %016X\n", secret, filepath.Join(dir, "release.pub"), pub.ID())
	return nil
}

func writePublic(path string, pub minisign.PublicKey) error {
	b, err := pub.MarshalText()
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
