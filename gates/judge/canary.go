package judge

import (
	"math/rand/v2"
	"strconv"
	"strings"
)

// Item is one (claim, evidence) pair to judge.
type Item struct {
	ID       string `json:"id"` // the caller's, e.g. "n12/citations[0]"; never shown to the judge
	Claim    string `json:"claim"`
	Evidence string `json:"evidence"`
}

// BuiltinCanaries are known-bad pairs shipped with questbox, used when a
// batch's own items give nothing to mutate. Each claim contradicts its
// evidence in one detail, the way a careless agent's would.
func BuiltinCanaries() []Item {
	return []Item{
		{Claim: "Tesseract 5 recognised 97% of the characters on the 40 scanned invoices.",
			Evidence: "On the 40 scanned invoices, Tesseract 5 recognised 79% of the characters; PaddleOCR reached 91%."},
		{Claim: "The library is released under the MIT licence, so it can be used commercially.",
			Evidence: "The library is released under the GNU AGPL v3; a commercial licence is sold separately."},
		{Claim: "The API allows 10,000 requests per day on the free plan.",
			Evidence: "Free plan: 1,000 requests per day. Paid plans start at 10,000 requests per day."},
		{Claim: "The sensor works down to -40 °C according to its datasheet.",
			Evidence: "Operating temperature range: -10 °C to +60 °C (datasheet, section 4.2)."},
		{Claim: "The paper reports that the method needs no labelled data.",
			Evidence: "Our method is trained on 5,000 labelled examples and fine-tuned on 500 more."},
	}
}

// MakeCanaries returns n known-bad pairs shaped like the real items, so that
// a judge cannot tell them apart: preferably a real claim with one of its
// numbers changed (the evidence still says the old number), else a real
// claim paired with another item's evidence, else a built-in canary. seed
// makes the choice reproducible; the engine passes a fresh random one. Each
// canary gets an ID that looks like a real one ("canary" never appears).
func MakeCanaries(real []Item, n int, seed uint64) []Item {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	builtin := BuiltinCanaries()
	out := make([]Item, 0, n)
	for i := 0; i < n; i++ {
		var c Item
		ok := false
		if len(real) > 0 {
			src := real[rng.IntN(len(real))]
			if claim, changed := mutateNumber(src.Claim, src.Evidence, rng); changed {
				c, ok = Item{Claim: claim, Evidence: src.Evidence}, true
			} else if len(real) > 1 {
				other := real[rng.IntN(len(real))]
				if other.Evidence != src.Evidence {
					c, ok = Item{Claim: src.Claim, Evidence: other.Evidence}, true
				}
			}
		}
		if !ok {
			c = builtin[rng.IntN(len(builtin))]
		}
		c.ID = "item-" + strconv.FormatUint(rng.Uint64()%1_000_000, 10)
		out = append(out, c)
	}
	return out
}

// mutateNumber changes one number of claim that also occurs in evidence, so
// that the claim now contradicts it. It reports false when there is none.
func mutateNumber(claim, evidence string, rng *rand.Rand) (string, bool) {
	type span struct{ start, end int }
	var nums []span
	for i := 0; i < len(claim); {
		if claim[i] >= '0' && claim[i] <= '9' {
			j := i
			for j < len(claim) && claim[j] >= '0' && claim[j] <= '9' {
				j++
			}
			if strings.Contains(evidence, claim[i:j]) {
				nums = append(nums, span{i, j})
			}
			i = j
			continue
		}
		i++
	}
	if len(nums) == 0 {
		return "", false
	}
	s := nums[rng.IntN(len(nums))]
	n, err := strconv.Atoi(claim[s.start:s.end])
	if err != nil {
		return "", false
	}
	m := n + 1 + rng.IntN(9)
	if n > 10 {
		m = n*2 + 3
	}
	repl := strconv.Itoa(m)
	for strings.Contains(evidence, repl) { // the new number must contradict, not match
		m += 7
		repl = strconv.Itoa(m)
	}
	return claim[:s.start] + repl + claim[s.end:], true
}
