package main

import (
	"strings"
	"testing"
)

// TestCheckConfigListsEveryProblem: run --check-config reports an unknown
// key, a value of the wrong type and the keys a table leaves out in one
// run, in file order.
func TestCheckConfigListsEveryProblem(t *testing.T) {
	cfg := writeConfig(t, "[daemon]\ntik = \"5s\"\nmax_parallel = \"two\"\n\n[providers.x]\nargv = [\"/bin/true\"]\n\n[judge]\nlight = { provider = \"x\", model = \"m\" }\n")
	r := must(t, 1, "", "run", "--check-config", "--config", cfg, "--data", t.TempDir())
	want := []string{
		":2: unknown key daemon.tik (did you mean daemon.tick?)",
		`:3:17: daemon.max_parallel: "two" is a string, want an integer`,
		":5: providers.x.type: missing",
		":8: judge.heavy.provider: missing",
		":8: judge.canary_threshold: missing",
	}
	at := 0
	for _, w := range want {
		i := strings.Index(r.stderr[at:], w)
		if i < 0 {
			t.Fatalf("check-config does not say %q after what came before:\n%s", w, r.stderr)
		}
		at += i
	}
}

// run --check-config knows the [logs] keys (docs/design.md, "Runs and their
// logs"): a good table passes, a bad value and a misspelt key are named with
// their lines.
func TestCheckConfigLogs(t *testing.T) {
	good := writeConfig(t, "[logs]\nper_run = \"64KiB\"\ntotal = \"16MiB\"\n")
	must(t, 0, "", "run", "--check-config", "--config", good, "--data", t.TempDir())
	bad := writeConfig(t, "[logs]\nper_run = \"1KiB\"\ntotl = \"16MiB\"\n")
	r := must(t, 1, "", "run", "--check-config", "--config", bad, "--data", t.TempDir())
	for _, w := range []string{":3: unknown key logs.totl (did you mean logs.total?)", "logs.per_run: 1KiB is below the minimum 4KiB"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("check-config does not say %q:\n%s", w, r.stderr)
		}
	}
}
