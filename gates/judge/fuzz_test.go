package judge

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/questbox/questbox/gates"
)

// FuzzParse feeds arbitrary judge output to Parse. Parse must never panic,
// and a judge can only clear with a well-formed object that quotes the
// evidence: whatever the bytes, a Clear comes from valid JSON and its
// quote occurs in the evidence. Anything else is a Doubt.
func FuzzParse(f *testing.F) {
	ev := "PaddleOCR reads Japanese invoices at 97% accuracy on the test set."
	for _, s := range []string{
		`{"decision":"clear","quote":"97% accuracy","reason":"the source says so"}`,
		`{"decision":"doubt","quote":"","reason":"the source does not say this"}`,
		`{"decision":"clear","quote":"","reason":"trust me"}`,
		`{"decision":"clear","quote":"99% accuracy","reason":"made up"}`,
		"```json\n{\"decision\":\"clear\",\"quote\":\"97%\",\"reason\":\"x\"}\n```",
		`{"decision":"clear","quote":"97%","reason":"x"}{"decision":"doubt"}`,
		`{"decision":"clear","decision":"doubt","quote":"97%","reason":"x"}`,
		`{"decision":"clear","quote":"97%","reason":"x","extra":1}`,
		`{"decision":"clear","quote":["97%"],"reason":"x"}`,
		`{"decision":"CLEAR","quote":"97%","reason":"x"}`,
		`{"decision":"clear","quote":"97\u200b%","reason":"x"}`,
		`  {"decision":"clear","quote":"ＰａｄｄｌｅＯＣＲ","reason":"width"}  `,
		``, `{`, `null`, `[]`, `"clear"`,
	} {
		f.Add(s, ev)
	}
	f.Fuzz(func(t *testing.T, output, evidence string) {
		r := Parse(output, evidence, "light")
		if r.Judge != "light" {
			t.Errorf("judge fingerprint %q, want light", r.Judge)
		}
		if !r.Cleared() {
			if r.Effect != Doubt {
				t.Errorf("effect %v: neither clear nor doubt", r.Effect)
			}
			return
		}
		if !r.Decided {
			t.Errorf("an undecided clear: %+v", r)
		}
		if !json.Valid([]byte(strings.TrimSpace(output))) {
			t.Errorf("cleared on output that is not JSON: %q", output)
		}
		if strings.TrimSpace(r.Quote) == "" || !gates.ContainsQuote(evidence, r.Quote) {
			t.Errorf("cleared with quote %q, which the evidence %q does not contain", r.Quote, evidence)
		}
	})
}
