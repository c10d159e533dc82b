package judge

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/questbox/questbox/gates"
)

// Parse reads a judge's raw output strictly (docs/design.md, "Judge
// discipline"). The output must be exactly one JSON object, optionally
// surrounded by white space, with exactly the string members "decision"
// ("clear" or "doubt"), "quote" and "reason". Anything else is an undecided
// [Doubt]: prose around the object, a code fence, two objects, a missing,
// extra, duplicated or ill-typed member, an unknown decision.
//
// Citation obligation: a "clear" must quote the evidence, and the quote must
// occur in evidence under [gates.ContainsQuote] (width, case and white space
// normalised; invisible characters in the quote that the evidence lacks do
// not match). A clear with an empty, absent or unfound quote is an
// undecided Doubt. A well-formed "doubt" is a decided Doubt.
//
// judge is the fingerprint recorded in the result.
func Parse(output, evidence, judge string) Result {
	b := bytes.TrimSpace([]byte(output))
	if len(b) == 0 || b[0] != '{' || !json.Valid(b) {
		return doubtf(judge, "the judge did not answer with exactly one JSON object: %s", excerpt(output))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // {
		return doubtf(judge, "unreadable judge answer: %v", err)
	}
	got := map[string]string{}
	for dec.More() {
		tk, err := dec.Token()
		if err != nil {
			return doubtf(judge, "unreadable judge answer: %v", err)
		}
		key, _ := tk.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return doubtf(judge, "unreadable judge answer: %v", err)
		}
		if _, dup := got[key]; dup {
			return doubtf(judge, "the judge's answer repeats %q", key)
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return doubtf(judge, "the judge's %q is not a string", key)
		}
		switch key {
		case "decision", "quote", "reason":
			got[key] = s
		default:
			return doubtf(judge, "the judge's answer has an unknown member %q", key)
		}
	}
	for _, k := range []string{"decision", "quote", "reason"} {
		if _, ok := got[k]; !ok {
			return doubtf(judge, "the judge's answer lacks %q", k)
		}
	}
	switch got["decision"] {
	case "doubt":
		return Result{Effect: Doubt, Quote: got["quote"], Reason: got["reason"], Judge: judge, Decided: true}
	case "clear":
		q := got["quote"]
		if strings.TrimSpace(q) == "" {
			return doubtf(judge, "the judge cleared without quoting the evidence")
		}
		if !gates.ContainsQuote(evidence, q) {
			return doubtf(judge, "the judge's quote %s is not in the evidence", excerpt(q))
		}
		return Result{Effect: Clear, Quote: q, Reason: got["reason"], Judge: judge, Decided: true}
	}
	return doubtf(judge, "the judge's decision is %s (want clear or doubt)", excerpt(got["decision"]))
}

func excerpt(s string) string {
	const n = 80
	if len(s) > n {
		s = s[:n] + "…"
	}
	b, _ := json.Marshal(s)
	return string(b)
}
