package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// quest new --project: a directory that cannot be used is refused with
// one sentence naming it; a good one is where the command agents run.
func TestQuestProject(t *testing.T) {
	dir := shortDir(t)
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
