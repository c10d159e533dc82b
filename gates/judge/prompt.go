package judge

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Template is a versioned judge prompt. Its hash is part of every judge
// fingerprint, so changing one byte of the text re-judges everything.
type Template struct {
	Version string
	Text    string // with {{claim}} and {{evidence}} placeholders
}

// Hash returns the hex SHA-256 of the version and text.
func (t Template) Hash() string {
	sum := sha256.Sum256([]byte(t.Version + "\x00" + t.Text))
	return hex.EncodeToString(sum[:])
}

// Render fills the placeholders in one pass, so a claim or evidence that
// itself contains "{{evidence}}" is not expanded again.
func (t Template) Render(claim, evidence string) string {
	return strings.NewReplacer("{{claim}}", claim, "{{evidence}}", evidence).Replace(t.Text)
}

// TemplateV1 is the first judge prompt.
func TemplateV1() Template {
	return Template{Version: "v1", Text: `You check whether EVIDENCE supports a CLAIM. You cannot approve anything; you can only
say that you see no problem ("clear") or raise doubt ("doubt").

Raise doubt if the claim contradicts the evidence, promises something the evidence does
not say, or adds a constraint the evidence does not support. Details that follow
naturally from the evidence are fine.

If you answer "clear" you MUST copy, word for word, the sentence of the EVIDENCE that
supports the claim into "quote". A clear without a verbatim quote counts as doubt.

Answer with exactly one JSON object and nothing else, no prose and no code fence:
{"decision": "clear" or "doubt", "quote": "<verbatim from EVIDENCE, or empty>", "reason": "<one sentence>"}

CLAIM:
<<<
{{claim}}
>>>

EVIDENCE:
<<<
{{evidence}}
>>>
`}
}

// TemplateByVersion returns a known template ("v1").
func TemplateByVersion(v string) (Template, error) {
	switch v {
	case "v1":
		return TemplateV1(), nil
	}
	return Template{}, fmt.Errorf("judge: unknown prompt template %q (known: v1)", v)
}
