package config

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Masked is what a secret becomes in a message: the same mask net/url
// puts on a URL's password (user:xxxxx@host).
const Masked = "xxxxx"

// minSecret is the shortest value masked wherever it occurs. A shorter
// one (a password "p", LANG=C, DEBUG=1) cannot be masked without mangling
// every message it happens to occur in ("xxxxxassword"), and is no
// credential anyway. A URL's password is masked whatever its length.
const minSecret = 4

// urlPassword finds the password of a URL's user information in text:
// scheme://user:PASSWORD@.
var urlPassword = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^/?#@:\s"']*:)[^/?#@\s"']*@`)

// publicEnv are the variables a provider's env commonly passes whose
// values are not secrets (the default env, locale and terminal). Their
// values are left alone: masking a PATH would hide where a program was
// looked for.
var publicEnv = []string{"PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TERM", "USER", "LOGNAME", "SHELL", "TMPDIR", "PWD"}

// Redactor masks the configured secrets in text: the password in the
// broker URL, mqtt.password, the contents of mqtt.password_file, the
// value of every provider's api_key_env, and the values of the variables
// a provider's env passes to its agent (but PATH and the like), each
// wherever it occurs once it has at least 4 characters, and the password
// of any URL (scheme://user:password@) whatever its length. It is the one
// redaction every message, log line, API view and event goes through.
// The zero value and a nil *Redactor mask only the passwords of URLs. A
// Redactor is safe for concurrent use.
type Redactor struct {
	secrets []string // longest first, so a secret inside another is masked whole
}

// NewRedactor returns the redactor of c's secrets. getenv reads the
// environment the providers' variables come from, and readFile the
// password file (its errors are ignored: a file that cannot be read holds
// nothing to leak here; the MQTT start-up reports it). Either may be nil.
func NewRedactor(c *Config, getenv func(string) string, readFile func(string) ([]byte, error)) *Redactor {
	var s []string
	s = append(s, brokerPassword(c.MQTT.Broker), c.MQTT.Password)
	if c.MQTT.PasswordFile != "" && readFile != nil {
		if b, err := readFile(c.MQTT.PasswordFile); err == nil {
			s = append(s, strings.TrimRight(string(b), "\r\n"))
		}
	}
	if getenv != nil {
		for _, name := range sortedKeys(c.Providers) {
			p := c.Providers[name]
			if p.APIKeyEnv != "" {
				s = append(s, getenv(p.APIKeyEnv))
			}
			for _, env := range p.Env {
				if v := getenv(env); !slices.Contains(publicEnv, env) {
					s = append(s, v)
				}
			}
		}
	}
	return newRedactor(s)
}

// newRedactor keeps the non-empty secrets, longest first.
func newRedactor(secrets []string) *Redactor {
	r := &Redactor{}
	for _, v := range secrets {
		if v = strings.TrimSpace(v); len(v) >= minSecret && !slices.Contains(r.secrets, v) {
			r.secrets = append(r.secrets, v)
		}
	}
	slices.SortStableFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
	return r
}

// String returns s with every secret, and the password of every URL in
// it, replaced by [Masked].
func (r *Redactor) String(s string) string {
	if strings.Contains(s, "@") {
		s = urlPassword.ReplaceAllString(s, "${1}"+Masked+"@")
	}
	if r == nil {
		return s
	}
	for _, v := range r.secrets {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Masked)
		}
	}
	return s
}

// Error returns err with its message redacted; errors.Is and errors.As
// still reach what err wraps. It returns err itself when nothing changed.
func (r *Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if red := r.String(msg); red != msg {
		return &redacted{msg: red, err: err}
	}
	return err
}

// redacted is an error whose message has had its secrets masked.
type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }

// brokerPassword is the password in a broker URL's user information
// (scheme://user:password@host), found without parsing the URL, so that
// a URL that does not parse is masked too.
func brokerPassword(broker string) string {
	rest := broker
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		rest = rest[:end] // the authority: an @ in the path is not a user's
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return ""
	}
	_, pw, ok := strings.Cut(rest[:at], ":")
	if !ok {
		return ""
	}
	return pw
}

// fileSecrets are the secrets written in the configuration file itself
// (mqtt.password, the broker URL's password), read from the generic
// decode so that they are known even when the file does not decode into a
// Config.
func fileSecrets(tree map[string]any) *Redactor {
	m, _ := tree["mqtt"].(map[string]any)
	var s []string
	if b, ok := m["broker"].(string); ok {
		s = append(s, brokerPassword(b))
	}
	if pw, ok := m["password"]; ok {
		s = append(s, literalSecret(pw))
	}
	return newRedactor(s)
}

// literalSecret is a secret value the file wrote, whatever its type, as
// messages would print it.
func literalSecret(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// redactAll masks the secrets in every error of errs (each an [*Error]
// or a syntax error), keeping its type.
func redactAll(r *Redactor, errs []error) []error {
	for i, err := range errs {
		var e *Error
		if errors.As(err, &e) {
			e.Msg = r.String(e.Msg)
			continue
		}
		errs[i] = r.Error(err)
	}
	return errs
}
