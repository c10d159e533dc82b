package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestCouncilProviders(t *testing.T) {
	c, err := Parse([]byte("[providers.gem]\ntype = \"command\"\nargv = [\"/bin/gem\"]\n\n[council]\nreviewers = [\"gem\", \"demo\"]\njudges = [\"gem\"]\n"), "q.toml")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Council{Reviewers: []string{"gem", "demo"}, Judges: []string{"gem"}}); !reflect.DeepEqual(c.Council, want) {
		t.Fatalf("got %+v, want %+v", c.Council, want)
	}
	got := strings.Join(errorsOf(t, "[council]\nreviewers = [\"nope\", \"external\"]\njudges = [\"\"]\n"), "\n")
	for _, want := range []string{`council.reviewers[0]`, `"nope" is not a provider`, `council.reviewers[1]`, `cannot sit on a council`, `council.judges[0]`} {
		if !strings.Contains(got, want) {
			t.Errorf("errors:\n%s\nwant one containing %q", got, want)
		}
	}
}
