package config

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

// secretValues are the secrets the configurations below carry.
var secretValues = []string{"brokerpw-S3CRET", "inline-S3CRET", "12345678", "pwfile-S3CRET", "apikey-S3CRET", "envval-S3CRET"}

// TestNoSecretInAnyMessage builds configurations full of secrets, each
// with problems that make every kind of message quote a value (type
// errors, unknown keys, validation of the broker URL, its TLS keys and its
// credentials), and greps every message for the secret values.
func TestNoSecretInAnyMessage(t *testing.T) {
	files := map[string]string{
		"credentials in the URL, TLS files on tcp": `[mqtt]
broker = "tcp://user:brokerpw-S3CRET@host:1883"
ca_file = "/etc/questbox/ca.pem"
cert_file = "/etc/questbox/c.pem"
server_name = "broker"
password = "inline-S3CRET"
password_file = "/etc/questbox/mqtt.pw"
`,
		"a URL that does not parse": `[mqtt]
broker = "tcp://user:brokerpw-S3CRET@host:bad port"
username = ""
password = "inline-S3CRET"
`,
		"a password of the wrong type": `[mqtt]
broker = "tcp://host:1883"
username = "u"
password = 12345678
`,
		"a password in an unknown key's table": `[mqtt]
broker = "ssl://user:brokerpw-S3CRET@host:8883"
pasword = "x"
ca_file = 3
`,
	}
	for name, file := range files {
		t.Run(name, func(t *testing.T) {
			var msgs []string
			_, err := Parse([]byte(file), "q.toml")
			if err == nil {
				t.Fatal("Parse succeeded, want errors")
			}
			msgs = append(msgs, err.Error())
			for _, e := range problemsOf(t, err) {
				msgs = append(msgs, e.Msg)
			}
			all := strings.Join(msgs, "\n")
			for _, s := range secretValues {
				if strings.Contains(all, s) {
					t.Errorf("a message carries the secret %q:\n%s", s, all)
				}
			}
		})
	}

	// A Config built in code, validated without a file.
	c := Default()
	c.MQTT.Broker = "tcp://user:brokerpw-S3CRET@host:1883"
	c.MQTT.CAFile, c.MQTT.Password, c.MQTT.PasswordFile = "/ca.pem", "inline-S3CRET", "/pw"
	err := c.Validate()
	if err == nil {
		t.Fatal("Validate succeeded, want errors")
	}
	for _, s := range secretValues {
		if strings.Contains(err.Error(), s) {
			t.Errorf("Validate's message carries the secret %q:\n%v", s, err)
		}
	}
	if !strings.Contains(err.Error(), "user:"+Masked+"@host") {
		t.Errorf("the broker URL is not shown masked:\n%v", err)
	}
}

// TestRedactor pins which values are secrets: the broker URL's password,
// mqtt.password, the password file's contents, API keys and the values of
// a provider's env, except the public ones and values too short to mask.
func TestRedactor(t *testing.T) {
	c := Default()
	c.MQTT.Broker = "ssl://user:brokerpw-S3CRET@host:8883/path@x"
	c.MQTT.Password = "inline-S3CRET"
	c.MQTT.PasswordFile = "/run/pw"
	c.Providers = map[string]Provider{
		"llm":   {Type: TypeOpenAI, APIKeyEnv: "LLM_KEY"},
		"agent": {Type: TypeCommand, Env: []string{"PATH", "AGENT_TOKEN", "DEBUG"}},
	}
	env := map[string]string{"LLM_KEY": "apikey-S3CRET", "AGENT_TOKEN": "envval-S3CRET", "PATH": "/usr/bin:/bin", "DEBUG": "1"}
	readFile := func(name string) ([]byte, error) {
		if name == "/run/pw" {
			return []byte("pwfile-S3CRET\n"), nil
		}
		return nil, fs.ErrNotExist
	}
	r := NewRedactor(c, func(k string) string { return env[k] }, readFile)
	for _, tc := range []struct{ in, want string }{
		{c.MQTT.Broker, "ssl://user:xxxxx@host:8883/path@x"},
		{"login inline-S3CRET, file pwfile-S3CRET", "login xxxxx, file xxxxx"},
		{"Bearer apikey-S3CRET; token=envval-S3CRET", "Bearer xxxxx; token=xxxxx"},
		{"PATH /usr/bin:/bin, DEBUG 1", "PATH /usr/bin:/bin, DEBUG 1"},
	} {
		if got := r.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	wrapped := errors.Join(ErrInvalid, errors.New("dial apikey-S3CRET"))
	if got := r.Error(wrapped); strings.Contains(got.Error(), "apikey-S3CRET") || !errors.Is(got, ErrInvalid) {
		t.Errorf("Error(%v) = %v (errors.Is ErrInvalid %v), want masked and still ErrInvalid", wrapped, got, errors.Is(got, ErrInvalid))
	}
	if got := (*Redactor)(nil).String("x"); got != "x" {
		t.Errorf("a nil Redactor changed %q to %q", "x", got)
	}
}
