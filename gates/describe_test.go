package gates

import (
	"encoding/json"
	"testing"
)

func TestDescribe(t *testing.T) {
	c, err := LoadCatalog([]RuleSpec{
		{ID: "contract", Kind: "contract", Level: "fail"},
		{ID: "quotes", Kind: "citation-quote", Level: "fail", Weight: 0.8},
		{ID: "no-todo", Kind: "regex", Level: "review", Params: map[string]any{"field": "evidence", "pattern": "TODO", "mode": "must_not_match"},
			Attacks: []string{"quotes"}, Supersedes: []string{"contract"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(c.Describe())
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"id":"contract","level":"fail","stage":"pure","kind":"contract","description":"the answer is the last ` + "```" + `json block (or one JSON object) with exactly the contract's fields, types and values, not cut at the output cap","attacks":[],"supersedes":[],"weight":1},` +
		`{"id":"quotes","level":"fail","stage":"ground","kind":"citation-quote","description":"every citation's quote occurs in its source (fetched URL or known document), after normalising width, case and white space","attacks":[],"supersedes":[],"weight":0.8},` +
		`{"id":"no-todo","level":"review","stage":"pure","kind":"regex","description":"evidence does not match /TODO/","attacks":["quotes"],"supersedes":["contract"],"weight":1}]`
	if string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
	custom := mustCatalog(t, silent("mine"), ContractRule())
	got := custom.Describe()
	if got[0].Kind != "custom" || got[1].Kind != "contract" || got[0].Attacks == nil {
		t.Errorf("got %+v, want kinds custom and contract and non-nil edges", got)
	}
}
