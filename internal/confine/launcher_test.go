//go:build linux

package confine

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/internal/buildtest"
)

// The daemon's runs start the small launcher beside its executable when
// it is there and of the daemon's build; when it is missing, does not
// answer, or answers with another build, they start the daemon's own
// executable, confined alike, and the report says why.
func TestLauncherBesideTheProgram(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		// put lays what lies beside the program at path.
		put func(t *testing.T, path string)
		// used: the small launcher is the launcher; else fallback is
		// why not, after "not PATH: ".
		used     bool
		fallback string
	}{
		{"of this build", func(t *testing.T, path string) { copyFile(t, buildtest.Launcher(t), path) }, true, ""},
		{"missing", func(*testing.T, string) {}, false, "it is missing"},
		{"of another build", script("echo 'questbox-confine protocol 0, go1.0'"), false,
			`it is of another build: it says "questbox-confine protocol 0, go1.0", the daemon is "` + build() + `"`},
		{"not a launcher", script("echo 'usage: not-a-launcher' >&2; exit 2"), false,
			"it does not answer: exit status 2: usage: not-a-launcher"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The program: a copy of the test binary, which is a
			// launcher too (TestMain calls Main).
			dir := t.TempDir()
			self := filepath.Join(dir, "questbox")
			copyFile(t, exe, self)
			beside := filepath.Join(dir, LauncherName)
			c.put(t, beside)
			h := newHarnessWith(t, Config{}, func(cfg Config) (*Launcher, error) { return newLauncher(cfg, self) })

			r := h.l.Report()
			want, why := beside, ""
			if !c.used {
				want, why = self, "not "+beside+": "+c.fallback
			}
			if r.Launcher != want || r.Fallback != why {
				t.Errorf("launcher %s (%q), want %s (%q)", r.Launcher, r.Fallback, want, why)
			}
			line := "; launcher " + want
			if why != "" {
				line += " (" + why + ")"
			}
			if !strings.HasSuffix(r.String(), line) {
				t.Errorf("report %q does not end in %q", r.String(), line)
			}
			if !r.Applied(Landlock) || !r.Applied(Seccomp) {
				t.Errorf("the runs are not confined: %s", r)
			}

			// A run starts the launcher chosen, and is confined.
			written := filepath.Join(h.project, "answer.txt")
			cmd := h.agent("write:"+written, "read:"+h.secret)
			cleanup, err := h.l.Confine(cmd, Run{Write: []string{h.project}})
			if err != nil {
				t.Fatal(err)
			}
			defer cleanup()
			if cmd.Path != want {
				t.Errorf("the run starts %s, want %s", cmd.Path, want)
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("confined agent: %v\n%s", err, out)
			}
			for _, w := range []string{"write:" + written + " ok", "read:" + h.secret + " refused"} {
				if !strings.Contains(string(out), w) {
					t.Errorf("the agent did not say %q:\n%s", w, out)
				}
			}
		})
	}
}

// script is a put that lays a shell script saying body at path.
func script(body string) func(t *testing.T, path string) {
	return func(t *testing.T, path string) {
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// A launcher refuses the run of a daemon of another build, even one it
// answered the probe for (replaced on disk since): the agent does not run.
func TestLauncherRefusesAnotherBuildsRun(t *testing.T) {
	h := mode{name: "questbox-confine", small: true}.harness(t)
	h.l.build = "questbox-confine protocol 0, go1.0"
	escape := filepath.Join(h.project, "ran")
	cmd := h.agent("write:" + escape)
	cleanup, err := h.l.Confine(cmd, Run{Write: []string{h.project}})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 126 ||
		!strings.Contains(stderr.String(), "questbox confine: this launcher is of another build ("+build()+") than the daemon that started it (questbox-confine protocol 0, go1.0)") {
		t.Fatalf("got %v, %q, %q; want exit 126 naming both builds", err, out, stderr.String())
	}
	if _, err := os.Stat(escape); err == nil {
		t.Error("the agent ran")
	}
}
