package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/questbox/questbox/ui/api"
)

// consentListCmd is `consent list`: every request that waits for a human,
// oldest first, with what waits and why.
type consentListCmd struct{}

func (c *consentListCmd) flags(*flag.FlagSet) {}

func (c *consentListCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("consent list", args); err != nil {
		return err
	}
	cs, err := e.door.api(ctx).Consents(ctx)
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, cs)
	}
	if len(cs) == 0 {
		fmt.Fprintln(e.stdout, "no consent waits")
		return nil
	}
	live := 0
	for _, v := range cs {
		if !v.Expired {
			live++
		}
	}
	w := e.stdout
	wrap(w, "", "", fmt.Sprintf("%d consent request(s) wait, oldest first. %s `questbox consent show NODE` shows a request's evidence.",
		live, howToAnswer))
	for _, v := range cs {
		fmt.Fprintln(w)
		writeConsent(w, v, false)
	}
	return nil
}

// consentShowCmd is `consent show NODE`: one request whole, with the
// evidence and the citations a yes approves.
type consentShowCmd struct{}

func (c *consentShowCmd) flags(*flag.FlagSet) {}

func (c *consentShowCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("consent show", args, "NODE"); err != nil {
		return err
	}
	v, err := e.door.api(ctx).Consent(ctx, args[0])
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, v)
	}
	writeConsent(e.stdout, v, true)
	fmt.Fprintln(e.stdout)
	wrap(e.stdout, "", "", howToAnswer+" The claim hash above is what a press binds to: a request whose claim changed since is not approved.")
	return nil
}

// howToAnswer is how a person answers a request: the CLI cannot.
const howToAnswer = "The box's button answers the oldest: hold it 2 s to approve, press it 3 times to reject " +
	"(`questbox device press` on the simulated one); the dashboard can too where dashboard.consent is on."

// writeConsent prints a request as a block that reads on an 80-column
// terminal; whole adds the evidence and the citations.
func writeConsent(w io.Writer, v api.Consent, whole bool) {
	what := v.Role
	if v.Team != "" {
		what = fmt.Sprintf("%s of Team %s (%s stage)", v.Role, v.Team, v.Stage)
	}
	head := fmt.Sprintf("%s · %s · quest %s · waiting %s", v.Node, what, v.Quest, v.Age)
	switch {
	case v.Expired:
		head += " · expired (back to pending at the next tick)"
	case v.ExpiresInSeconds != nil:
		head += " · expires in " + dur(time.Duration(*v.ExpiresInSeconds)*time.Second)
	}
	wrap(w, "", "    ", head)
	wrap(w, "  hypothesis: ", "    ", v.Hypothesis)
	fmt.Fprintln(w, "  why:")
	for _, r := range v.Reasons {
		wrap(w, "    - ", "      ", r.Text)
		if r.Quote != "" || r.Source != "" {
			wrap(w, "      cited: ", "        ", fmt.Sprintf("%s: “%s”", r.Source, r.Quote))
		}
	}
	d := v.Deliverable
	approves := "the answer of " + d.Node
	if d.Verdict != "" {
		approves = fmt.Sprintf("%s's %s", d.Node, d.Verdict)
	}
	cites := "no citations"
	if n := len(d.Citations) + d.CitationsMore; n > 0 {
		cites = strconv.Itoa(n) + " citation(s)"
	}
	wrap(w, "  approves: ", "    ", fmt.Sprintf("%s: %s of evidence, %s", approves, byteText(d.EvidenceBytes), cites))
	if !whole {
		wrap(w, "  claim: ", "    ", fmt.Sprintf("%.12s (`questbox consent show %s` for the evidence)", v.ClaimHash, v.Node))
		return
	}
	wrap(w, "  claim hash: ", "    ", v.ClaimHash)
	wrap(w, "  since: ", "    ", v.Since.Local().Format(time.RFC3339))
	if v.ExpiresAt != nil {
		wrap(w, "  expires: ", "    ", v.ExpiresAt.Local().Format(time.RFC3339))
	}
	switch {
	case d.Evidence == "" && d.EvidenceBytes == 0:
		fmt.Fprintln(w, "  evidence: none recorded")
	case d.Evidence == "":
		wrap(w, "  evidence: ", "    ", fmt.Sprintf("%s, left out here (`questbox quest show` has it)", byteText(d.EvidenceBytes)))
	default:
		if d.EvidenceCut {
			wrap(w, "  evidence ", "    ", fmt.Sprintf("(%s; its start is cut, its last %s shown):", byteText(d.EvidenceBytes), byteText(api.MaxConsentEvidence)))
		} else {
			fmt.Fprintln(w, "  evidence:")
		}
		for l := range strings.SplitSeq(d.Evidence, "\n") {
			wrap(w, "    ", "    ", l)
		}
	}
	if len(d.Citations) > 0 {
		fmt.Fprintln(w, "  citations:")
		for _, c := range d.Citations {
			wrap(w, "    - ", "      ", fmt.Sprintf("%s: “%s”", c.Source, c.Quote))
		}
		if d.CitationsMore > 0 {
			wrap(w, "    ", "    ", fmt.Sprintf("and %d more (`questbox quest show`)", d.CitationsMore))
		}
	}
}

// byteText is a byte count for people: 812 bytes, 4.1KB.
func byteText(n int) string {
	if n < 1000 {
		return strconv.Itoa(n) + " bytes"
	}
	return size(int64(n)) + "B"
}

// termWidth is the width the CLI's text fits in: a terminal's 80 columns.
const termWidth = 80

// wrap prints text on lines of at most termWidth columns: the first
// starting with first, the others with hang. Words wider than a line are
// cut. Control characters are written as escapes: nothing the text holds
// (an agent's answer) can move the cursor, recolour the terminal or make
// a link.
func wrap(w io.Writer, first, hang, text string) {
	prefix, line, col := first, "", 0
	flush := func() {
		fmt.Fprintln(w, strings.TrimRight(prefix+line, " "))
		prefix, line, col = hang, "", 0
	}
	room := func() int { return termWidth - columns(prefix) }
	for _, word := range strings.Fields(terminalSafe(text)) {
		wc := columns(word)
		if col > 0 && col+1+wc > room() {
			flush()
		}
		for wc > room() { // a word wider than a line: cut it
			if col > 0 {
				flush()
			}
			head, rest := cutColumns(word, room())
			line = head
			flush()
			word, wc = rest, columns(rest)
		}
		if col > 0 {
			line += " "
			col++
		}
		line += word
		col += wc
	}
	flush()
}

// terminalSafe is text as the API's rule shows it (api.Printable, lines
// kept), tabs as spaces.
func terminalSafe(s string) string { return strings.ReplaceAll(api.Printable(s, true), "\t", " ") }

// columns is how many terminal columns s takes.
func columns(s string) int {
	n := 0
	for _, r := range s {
		n += runeColumns(r)
	}
	return n
}

// cutColumns splits s after at most n columns (at least one rune).
func cutColumns(s string, n int) (string, string) {
	col := 0
	for i, r := range s {
		c := runeColumns(r)
		if col+c > n && i > 0 {
			return s[:i], s[i:]
		}
		col += c
	}
	return s, ""
}

// runeColumns is the columns r takes: none for a combining mark, two for
// the wide characters of East Asian scripts and emoji, one otherwise.
func runeColumns(r rune) int {
	switch {
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	case r >= 0x1100 && r <= 0x115f, r >= 0x2e80 && r <= 0xa4cf && r != 0x303f, r >= 0xac00 && r <= 0xd7a3,
		r >= 0xf900 && r <= 0xfaff, r >= 0xfe30 && r <= 0xfe4f, r >= 0xff00 && r <= 0xff60, r >= 0xffe0 && r <= 0xffe6,
		r >= 0x1f300 && r <= 0x1f64f, r >= 0x1f900 && r <= 0x1f9ff, r >= 0x20000 && r <= 0x3fffd:
		return 2
	}
	return 1
}
