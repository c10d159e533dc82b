package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/questbox/questbox/internal/buildtest"
	"github.com/questbox/questbox/internal/daemon/daemontest"
)

// quest new --project: a directory that cannot be used is refused with
// one sentence naming it; a good one is where the command agents run.
func TestQuestProject(t *testing.T) {
	dir := daemontest.ShortDir(t)
	data := filepath.Join(dir, "data")
	cfg := runsConfig(t, dir, "[providers.where]\ntype = \"command\"\nargv = [\"sh\", \"-c\", \"cat >/dev/null; echo ran in $(pwd) >&2\"]\n")
	d := []string{"--config", cfg, "--data", data}
	file := filepath.Join(dir, "a-file")
	os.WriteFile(file, nil, 0o644)
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "missing"), `project "` + filepath.Join(dir, "missing") + `" does not exist`},
		{file, `project "` + file + `" is not a directory`},
	} {
		r := must(t, 1, "", append([]string{"quest", "new", "p", "--direction", "somewhere", "--provider", "where", "--project", c.path}, d...)...)
		if !strings.Contains(r.stderr, c.want) {
			t.Errorf("--project %s: %q, want %q", c.path, r.stderr, c.want)
		}
	}
	if os.Geteuid() != 0 {
		locked := filepath.Join(dir, "locked")
		os.Mkdir(locked, 0o500)
		r := must(t, 1, "", append([]string{"quest", "new", "p", "--direction", "somewhere", "--provider", "where", "--project", locked}, d...)...)
		if !strings.Contains(r.stderr, "cannot be read, written and entered by the daemon's user") {
			t.Errorf("--project on a read-only directory: %q", r.stderr)
		}
	}

	project := filepath.Join(dir, "project")
	os.Mkdir(project, 0o755)
	var q struct{ ID, Project string }
	decode(t, must(t, 0, "", append([]string{"quest", "new", "p", "--direction", "somewhere", "--provider", "where", "--mode", "solo", "--max-tries", "1", "--project", project, "--json"}, d...)...), &q)
	if q.Project != project {
		t.Errorf("the quest's project: %q, want %q", q.Project, project)
	}
	must(t, 0, "", append([]string{"tick"}, d...)...)
	if log := must(t, 0, "", append([]string{"logs", "n1"}, d...)...).stdout; !strings.Contains(log, "ran in "+project+"\n") {
		t.Errorf("the agent did not run in the project:\n%s", log)
	}
}

// A directory the daemon's user cannot write is refused at creation. As
// root (who may use any directory) the check is made by a questbox running
// as nobody, over a store nobody may write.
func TestQuestProjectPermission(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("runs questbox as nobody, which needs root; as another user TestQuestProject checks a 0500 directory")
	}
	bin := buildtest.Questbox(t)
	dir := daemontest.ShortDir(t)
	os.Chmod(dir, 0o755)
	for _, d := range []string{"data", "project"} {
		os.Mkdir(filepath.Join(dir, d), 0o755)
	}
	os.Chmod(filepath.Join(dir, "data"), 0o777)
	nobodyBin := filepath.Join(dir, "questbox")
	raw, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(nobodyBin, raw, 0o755)
	cfg := filepath.Join(dir, "questbox.toml")
	os.WriteFile(cfg, []byte("[network]\nprobe = \"\"\n"), 0o644)
	project := filepath.Join(dir, "project") // root's, 0755: nobody may not write it
	cmd := exec.Command(nobodyBin, "quest", "new", "p", "--direction", "somewhere", "--provider", "external", "--project", project,
		"--config", cfg, "--data", filepath.Join(dir, "data"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	want := `project "` + project + `" cannot be read, written and entered by the daemon's user (uid 65534): permission denied`
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), want) {
		t.Errorf("as nobody: %v, %q; want exit 1 and %q", err, stderr.String(), want)
	}
}
