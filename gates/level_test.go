package gates

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestLevelString(t *testing.T) {
	tests := []struct {
		name string
		l    Level
		want string
	}{
		{"review", Review, "review"},
		{"fail", Fail, "fail"},
		{"zero", 0, "Level(0)"},
		{"unknown", 9, "Level(9)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.l.String(); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseLevel(t *testing.T) {
	tests := []struct {
		in      string
		want    Level
		wantErr bool
	}{
		{"fail", Fail, false},
		{"FAIL", Fail, false},
		{" Review ", Review, false},
		{"review", Review, false},
		{"", 0, true},
		{"warn", 0, true},
		{"2", 0, true},
		{"failed", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseLevel(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if err != nil && !errors.Is(err, ErrInvalidLevel) {
				t.Errorf("got %v, want errors.Is ErrInvalidLevel", err)
			}
			if err != nil && !containsQuoted(err.Error(), tt.in) {
				t.Errorf("error %q does not name the value %q", err, tt.in)
			}
		})
	}
}

func containsQuoted(s, v string) bool {
	b, _ := json.Marshal(v)
	return strings.Contains(s, string(b))
}

func TestTextRoundTrip(t *testing.T) {
	type doc struct {
		L Level   `json:"l"`
		S Stage   `json:"s"`
		O Outcome `json:"o"`
	}
	for _, d := range []doc{
		{Fail, StagePure, OutcomePass},
		{Review, StageGround, OutcomeReview},
		{Fail, StageGround, OutcomeFail},
	} {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("marshal %+v: %v", d, err)
		}
		var got doc
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("unmarshal %s: %v", b, err)
		}
		if got != d {
			t.Errorf("got %+v, want %+v (via %s)", got, d, b)
		}
	}
}

func TestTextInvalid(t *testing.T) {
	tests := []struct {
		name string
		v    any
		sent error
	}{
		{"zero level", Level(0), ErrInvalidLevel},
		{"zero stage", Stage(0), ErrInvalidStage},
		{"zero outcome", Outcome(0), ErrInvalidOutcome},
		{"big outcome", Outcome(7), ErrInvalidOutcome},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := json.Marshal(tt.v)
			if !errors.Is(err, tt.sent) {
				t.Errorf("got %v, want %v", err, tt.sent)
			}
		})
	}
	for _, in := range []string{`{"l":"warn"}`, `{"s":"network"}`, `{"o":"OK"}`, `{"l":3}`} {
		var d struct {
			L Level   `json:"l"`
			S Stage   `json:"s"`
			O Outcome `json:"o"`
		}
		if err := json.Unmarshal([]byte(in), &d); err == nil {
			t.Errorf("unmarshal %s: got nil error, want one", in)
		}
	}
}

func TestStageAndOutcomeStrings(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"pure", StagePure.String(), "pure"},
		{"ground", StageGround.String(), "ground"},
		{"stage zero", Stage(0).String(), "Stage(0)"},
		{"pass", OutcomePass.String(), "PASS"},
		{"review", OutcomeReview.String(), "REVIEW"},
		{"fail", OutcomeFail.String(), "FAIL"},
		{"outcome zero", Outcome(0).String(), "Outcome(0)"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	for _, s := range []string{"pass", " Review", "FAIL"} {
		if _, err := ParseOutcome(s); err != nil {
			t.Errorf("ParseOutcome(%q): got %v, want nil", s, err)
		}
	}
	if _, err := ParseStage("Ground"); err != nil {
		t.Errorf("ParseStage: got %v, want nil", err)
	}
}
