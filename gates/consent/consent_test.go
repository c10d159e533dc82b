package consent

import (
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/questbox/questbox/gates"
)

var (
	shown = gates.ClaimHash([]byte(`{"verdict":"conclusion"}`))
	other = gates.ClaimHash([]byte(`{"verdict":"conclusion"} `))
)

func mustDashboard(t *testing.T) Dashboard {
	t.Helper()
	d, err := NewDashboard(true, "alice")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		src     Source
		hash    string
		wantErr error
		wantVia string
	}{
		{"button", Button{}, shown, nil, "button"},
		{"dashboard", mustDashboard(t), shown, nil, "dashboard:alice"},
		{"mqtt", mustMQTT(t), shown, nil, "mqtt"},
		{"nil source", nil, shown, ErrNoConsent, ""},
		{"zero mqtt", MQTT{}, shown, ErrNoConsent, ""},
		{"zero dashboard", Dashboard{}, shown, ErrNoConsent, ""},
		{"empty hash", Button{}, "", ErrBadClaimHash, ""},
		{"upper-case hash", Button{}, strings.ToUpper(shown), ErrBadClaimHash, ""},
		{"short hash", Button{}, shown[:63], ErrBadClaimHash, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.src, tt.hash)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("got error %v, want %v", err, tt.wantErr)
			}
			if got := c.Via(); got != tt.wantVia {
				t.Errorf("got via %q, want %q", got, tt.wantVia)
			}
		})
	}
}

func mustMQTT(t *testing.T) MQTT {
	t.Helper()
	m, err := NewMQTT(true)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestNewMQTTDisabled(t *testing.T) {
	if _, err := NewMQTT(false); !errors.Is(err, ErrNoConsent) {
		t.Errorf("got %v, want ErrNoConsent", err)
	}
}

func TestNewDashboardDisabled(t *testing.T) {
	tests := []struct {
		name    string
		enabled bool
		user    string
	}{
		{"not enabled by the owner", false, "alice"},
		{"no user", true, "  "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewDashboard(tt.enabled, tt.user); !errors.Is(err, ErrNoConsent) {
				t.Errorf("got %v, want ErrNoConsent", err)
			}
		})
	}
}

func TestForRejectsAnotherClaim(t *testing.T) {
	c, err := New(Button{}, shown)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		c    Consent
		hash string
		want error
	}{
		{"same claim", c, shown, nil},
		{"claim changed by one byte", c, other, ErrWrongClaim},
		{"empty hash", c, "", ErrWrongClaim},
		{"zero consent", Consent{}, shown, ErrNoConsent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.For(tt.hash); !errors.Is(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestApprove(t *testing.T) {
	c, err := New(Button{}, shown)
	if err != nil {
		t.Fatal(err)
	}
	review := gates.Aggregate([]gates.Fact{{Rule: "r", Level: gates.Review}})
	fail := gates.Aggregate([]gates.Fact{{Rule: "r", Level: gates.Fail}})
	pass := gates.Aggregate(nil)
	forged := gates.Verdict{Outcome: gates.OutcomeReview, Facts: []gates.Fact{{Rule: "r", Level: gates.Fail}}}
	tests := []struct {
		name string
		v    gates.Verdict
		hash string
		want error
	}{
		{"review for the shown claim", review, shown, nil},
		{"review for another claim", review, other, ErrWrongClaim},
		{"fail cannot be overruled", fail, shown, ErrNotReviewable},
		{"pass needs no consent", pass, shown, ErrNotReviewable},
		{"inconsistent verdict", forged, shown, ErrNotReviewable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.Approve(tt.v, tt.hash); !errors.Is(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestJudgeCannotReachConsent pins the authority split by the import graph:
// neither the L1 package nor the L2 judge can depend on this package, so no
// code path there can construct a Consent.
func TestJudgeCannotReachConsent(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go command not found: %v", err)
	}
	for _, pkg := range []string{"github.com/questbox/questbox/gates", "github.com/questbox/questbox/gates/judge"} {
		out, err := exec.Command(goBin, "list", "-deps", "-json=ImportPath", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		dec := json.NewDecoder(strings.NewReader(string(out)))
		n := 0
		for dec.More() {
			var p struct{ ImportPath string }
			if err := dec.Decode(&p); err != nil {
				t.Fatal(err)
			}
			n++
			if p.ImportPath == "github.com/questbox/questbox/gates/consent" {
				t.Errorf("%s depends on gates/consent: L1/L2 must not be able to construct consent", pkg)
			}
		}
		if n == 0 {
			t.Fatalf("got no packages from go list for %s, want at least itself", pkg)
		}
	}
}
