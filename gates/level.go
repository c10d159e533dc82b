package gates

import (
	"fmt"
	"strings"
)

// Level is a rule's severity: a level, not a weight. The zero value is invalid,
// so a rule that forgets to declare its level is rejected by [NewCatalog].
type Level uint8

const (
	// Review means a human (L3) must look before the result can be locked.
	Review Level = 1
	// Fail means the submission is rejected.
	Fail Level = 2
)

// Valid reports whether l is Review or Fail.
func (l Level) Valid() bool { return l == Review || l == Fail }

// String returns "review" or "fail", or "Level(N)" for an invalid level.
func (l Level) String() string {
	switch l {
	case Review:
		return "review"
	case Fail:
		return "fail"
	}
	return fmt.Sprintf("Level(%d)", uint8(l))
}

// ParseLevel parses "fail" or "review", ignoring case and surrounding
// whitespace. Anything else is an error naming the value.
func ParseLevel(s string) (Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "review":
		return Review, nil
	case "fail":
		return Fail, nil
	}
	return 0, fmt.Errorf("gates: unknown level %q (want fail or review): %w", s, ErrInvalidLevel)
}

// MarshalText implements encoding.TextMarshaler. An invalid level is an error,
// so it can never be written out and read back as something else.
func (l Level) MarshalText() ([]byte, error) {
	if !l.Valid() {
		return nil, fmt.Errorf("gates: marshal %s: %w", l, ErrInvalidLevel)
	}
	return []byte(l.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler using [ParseLevel].
func (l *Level) UnmarshalText(b []byte) error {
	v, err := ParseLevel(string(b))
	if err != nil {
		return err
	}
	*l = v
	return nil
}

// Stage says when a rule runs (docs/design.md, "Staged evaluation and
// ground"). The zero value is invalid.
type Stage uint8

const (
	// StagePure rules look only at the submission and its context; they run first.
	StagePure Stage = 1
	// StageGround rules use network facts supplied by ground; they run only if
	// the pure stage did not FAIL, and are skipped while the box is offline.
	StageGround Stage = 2
)

// Valid reports whether s is a known stage.
func (s Stage) Valid() bool { return s == StagePure || s == StageGround }

// String returns "pure" or "ground", or "Stage(N)" for an invalid stage.
func (s Stage) String() string {
	switch s {
	case StagePure:
		return "pure"
	case StageGround:
		return "ground"
	}
	return fmt.Sprintf("Stage(%d)", uint8(s))
}

// ParseStage parses "pure" or "ground", ignoring case and surrounding whitespace.
func ParseStage(s string) (Stage, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "pure":
		return StagePure, nil
	case "ground":
		return StageGround, nil
	}
	return 0, fmt.Errorf("gates: unknown stage %q (want pure or ground): %w", s, ErrInvalidStage)
}

// MarshalText implements encoding.TextMarshaler; an invalid stage is an error.
func (s Stage) MarshalText() ([]byte, error) {
	if !s.Valid() {
		return nil, fmt.Errorf("gates: marshal %s: %w", s, ErrInvalidStage)
	}
	return []byte(s.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler using [ParseStage].
func (s *Stage) UnmarshalText(b []byte) error {
	v, err := ParseStage(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Outcome is the result of a gate. The zero value is invalid: an unset outcome
// is never mistaken for a pass.
type Outcome uint8

const (
	// OutcomePass means no rule fired. Only L1 aggregation produces it.
	OutcomePass Outcome = 1
	// OutcomeReview means at least one Review fact and no Fail fact.
	OutcomeReview Outcome = 2
	// OutcomeFail means at least one Fail fact.
	OutcomeFail Outcome = 3
)

// Valid reports whether o is a known outcome.
func (o Outcome) Valid() bool { return o >= OutcomePass && o <= OutcomeFail }

// String returns "PASS", "REVIEW" or "FAIL", or "Outcome(N)" when invalid.
func (o Outcome) String() string {
	switch o {
	case OutcomePass:
		return "PASS"
	case OutcomeReview:
		return "REVIEW"
	case OutcomeFail:
		return "FAIL"
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// ParseOutcome parses "PASS", "REVIEW" or "FAIL", ignoring case and surrounding
// whitespace.
func ParseOutcome(s string) (Outcome, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "PASS":
		return OutcomePass, nil
	case "REVIEW":
		return OutcomeReview, nil
	case "FAIL":
		return OutcomeFail, nil
	}
	return 0, fmt.Errorf("gates: unknown outcome %q (want PASS, REVIEW or FAIL): %w", s, ErrInvalidOutcome)
}

// MarshalText implements encoding.TextMarshaler; an invalid outcome is an error.
func (o Outcome) MarshalText() ([]byte, error) {
	if !o.Valid() {
		return nil, fmt.Errorf("gates: marshal %s: %w", o, ErrInvalidOutcome)
	}
	return []byte(o.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler using [ParseOutcome].
func (o *Outcome) UnmarshalText(b []byte) error {
	v, err := ParseOutcome(string(b))
	if err != nil {
		return err
	}
	*o = v
	return nil
}
