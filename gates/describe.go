package gates

// RuleInfo is one rule as `questbox rules` shows it: the audit list of what
// the gate blocks. Attacks and Supersedes are never nil (they encode as []).
type RuleInfo struct {
	ID          string   `json:"id"`
	Level       Level    `json:"level"`
	Stage       Stage    `json:"stage"`
	Kind        string   `json:"kind"` // the built-in kind, or "custom" for a Go rule
	Description string   `json:"description"`
	Attacks     []string `json:"attacks"`
	Supersedes  []string `json:"supersedes"`
	Weight      float64  `json:"weight"` // in the defeat graph; 1 unless configured
}

// Describe lists the catalog's rules in order with their graph edges.
// Descriptions come from the rules; a panicking Description reads
// "(description unavailable)".
func (c *Catalog) Describe() []RuleInfo {
	if c == nil {
		return nil
	}
	out := make([]RuleInfo, len(c.entries))
	for i, e := range c.entries {
		k := e.kind
		if k == "" {
			k = "custom"
			if _, ok := kindByName(e.id); ok {
				k = e.id // a built-in rule added in Go, such as DefaultCatalog's
			}
		}
		out[i] = RuleInfo{ID: e.id, Level: e.level, Stage: e.stage, Kind: k,
			Description: describeSafely(e.rule), Attacks: []string{}, Supersedes: []string{}, Weight: 1}
	}
	if g := c.graph; g != nil {
		idx := map[string]int{}
		for i, e := range c.entries {
			idx[e.id] = i
		}
		for _, ed := range g.edges {
			i := idx[ed.From]
			if ed.Kind == Attacks {
				out[i].Attacks = append(out[i].Attacks, ed.To)
			} else {
				out[i].Supersedes = append(out[i].Supersedes, ed.To)
			}
		}
		for i := range out {
			out[i].Weight = g.weight[i]
		}
	}
	return out
}

func describeSafely(r Rule) (d string) {
	defer func() {
		if recover() != nil {
			d = "(description unavailable)"
		}
	}()
	return r.Description()
}
