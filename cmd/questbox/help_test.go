package main

import (
	"strings"
	"testing"
)

// TestHelpAnywhere: -h (or --help, or help VERB) at any level prints that
// level's help on stdout and exits 0, as git and tailscale do.
func TestHelpAnywhere(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-h"}, "usage: questbox VERB"},
		{[]string{"help"}, "usage: questbox VERB"},
		{[]string{"--data", "./data", "-h"}, "usage: questbox VERB"},
		{[]string{"quest", "-h"}, "usage: questbox quest VERB"},
		{[]string{"quest", "--help"}, "  quest abort-node NODE"},
		{[]string{"help", "quest"}, "usage: questbox quest VERB"},
		{[]string{"device", "-h"}, "  device press [--hold D]"},
		{[]string{"quest", "new", "-h"}, "usage: questbox quest new NAME --direction TEXT"},
		{[]string{"quest", "new", "ocr", "--direction", "d", "--help"}, "-direction string"},
		{[]string{"help", "device", "press"}, "-hold duration"},
		{[]string{"status", "-h"}, "usage: questbox status QUEST"},
	} {
		r := must(t, 0, "", tc.args...)
		if !strings.Contains(r.stdout, tc.want) {
			t.Errorf("%q: stdout %q, want it to contain %q", tc.args, r.stdout, tc.want)
		}
	}
}

// TestQuestNewHelpShowsTheDefaults: the budgets and settings a flag left
// out takes are the config's [defaults], and -h says what they are.
func TestQuestNewHelpShowsTheDefaults(t *testing.T) {
	cfg := writeConfig(t, "[defaults]\nmax_agent_runs = 7\nwall_clock = \"2h\"\n")
	r := must(t, 0, "", "quest", "new", "--config", cfg, "-h")
	for _, want := range []string{"(default 7)", "(default 2h0m0s)", "(default 3)", "(default 1000000)", `(default "team")`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("quest new -h does not show %s:\n%s", want, r.stdout)
		}
	}
}

// TestUsageErrorsSayWhatToDo: a mistyped verb is named, with the nearest
// one (the rule config keys use); a duration without a unit suggests one;
// a verb that needs a quest says where the ids are.
func TestUsageErrorsSayWhatToDo(t *testing.T) {
	data := dataDir(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"quest", "lst"}, []string{`"quest lst"`, "did you mean `questbox quest list`?"}},
		{[]string{"quets", "list"}, []string{`"quets"`, "did you mean `questbox quest list`?"}},
		{[]string{"devcie", "status"}, []string{"did you mean `questbox device status`?"}},
		{[]string{"stauts", "q1"}, []string{"did you mean `questbox status q1`?"}},
		{[]string{"device", "press", "--hold", "2", "--data", data}, []string{`"2"`, "did you mean 2s?"}},
		{[]string{"quest", "new", "x", "--direction", "d", "--wall-clock", "24", "--data", data}, []string{"did you mean 24s?"}},
		{[]string{"status", "--data", data}, []string{"status needs QUEST", "`questbox quest list`"}},
		{[]string{"quest", "show", "--data", data}, []string{"`questbox quest list`"}},
	} {
		r := must(t, 1, "", tc.args...)
		for _, w := range tc.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%q: stderr %q, want it to contain %q", tc.args, r.stderr, w)
			}
		}
	}
}
