//go:build soak

package soak

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The soak agent is this test binary started by the daemon as a command
// provider: argv = [test binary, "soak-agent", dir]. It reads the prompt,
// appends "NODE PID OUTCOME" to dir/invocations.log before it answers (so
// every run the daemon started is on record, even one the kill cut short),
// and answers with one of the outcomes below, at random.

const agentArg = "soak-agent"

// unknownNode is logged for a run whose prompt ended before its "Node ID,"
// line: the daemon was killed while it wrote the prompt.
const unknownNode = "?"

// reviewMark makes the soak gate's review rule fire.
const reviewMark = "NEEDS-REVIEW"

// agentHang is how long a hanging answer sleeps: longer than the provider's
// timeout (the daemon kills it), and short, so that an agent orphaned by a
// SIGKILL of the daemon (it runs in its own process group) ends by itself.
const agentHang = 4 * time.Second

// outcomes and their weights (percent).
var outcomes = []struct {
	name   string
	weight int
}{
	{"promising", 28},
	{"dead", 14},
	{"conclusion", 10},
	{"fail", 15},
	{"review", 15},
	{"hang", 10},
	{"flood", 8},
}

func pick(r *rand.Rand) string {
	n := r.IntN(100)
	for _, o := range outcomes {
		if n < o.weight {
			return o.name
		}
		n -= o.weight
	}
	return outcomes[0].name
}

// agentMain is the agent's whole life; it returns the exit code.
func agentMain(dir string) int {
	prompt, _ := io.ReadAll(io.LimitReader(os.Stdin, 4<<20))
	node := unknownNode
	sc := bufio.NewScanner(strings.NewReader(string(prompt)))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "Node "); ok {
			if id, _, ok := strings.Cut(rest, ","); ok {
				node = id
				break
			}
		}
	}
	seed := uint64(time.Now().UnixNano()) ^ uint64(os.Getpid())<<32
	r := rand.New(rand.NewPCG(seed, seed>>7))
	what := pick(r)
	role := memberRole(string(prompt))
	if role != "" {
		what = pickMember(r)
	}
	f, err := os.OpenFile(filepath.Join(dir, "invocations.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// One write under PIPE_BUF: appends from concurrent agents never mix.
	fmt.Fprintf(f, "%s %d %s\n", node, os.Getpid(), what)
	f.Close()

	if role != "" {
		return memberAnswer(string(prompt), role, what)
	}
	tag := fmt.Sprintf("%x", r.Uint64())
	dirs := []string{}
	verdict := what
	evidence := "the soak agent looked at " + node + " and found something worth noting " + tag
	cites := []map[string]string{}
	switch what {
	case "hang":
		time.Sleep(agentHang)
		return 0
	}
	switch what {
	case "flood":
		// Far past the provider's output_cap: the answer is cut and FAILs.
		line := strings.Repeat("flood ", 1000) + "\n"
		for range 400 {
			if _, err := io.WriteString(os.Stdout, line); err != nil {
				return 0
			}
		}
		return 0
	case "fail":
		fmt.Printf("no contract here, only noise %s\n", tag)
		return 0
	}
	if stageAnswer(string(prompt), what, tag, r) {
		return 0
	}
	switch what {
	case "promising":
		for i := range 1 + r.IntN(2) {
			dirs = append(dirs, fmt.Sprintf("follow-up %d of %s %s", i, node, tag))
		}
	case "conclusion":
		cites = append(cites, map[string]string{"source": "https://example.org/" + tag, "quote": "a quote " + tag})
	case "review":
		verdict = []string{"promising", "dead"}[r.IntN(2)]
		evidence += " " + reviewMark
		if verdict == "promising" {
			dirs = append(dirs, "reviewed follow-up of "+node+" "+tag)
		}
	}
	b, _ := json.Marshal(map[string]any{"verdict": verdict, "evidence": evidence, "citations": cites, "new_directions": dirs})
	fmt.Printf("Soak findings for %s.\n```json\n%s\n```\n", node, b)
	return 0
}

// stageAnswer answers for a Team's planner (a plan) or accepter (accept,
// quoting the deliverable the prompt shows, or reject with a random
// revision target), and reports whether the prompt was one of theirs.
// An executer answers as any worker.
func stageAnswer(prompt, what, tag string, r *rand.Rand) bool {
	switch {
	case strings.HasPrefix(prompt, "You are the planner of"):
		fmt.Printf("Soak plan %s: 1. look 2. report\n", tag)
		return true
	case strings.HasPrefix(prompt, "You are the accepter of"):
		a := map[string]any{"decision": "reject", "reason": "soak rejects " + tag,
			"revision_target": []string{"planner", "executer"}[r.IntN(2)]}
		if what == "promising" || what == "conclusion" || r.IntN(3) == 0 {
			quote := "soak"
			if _, rest, ok := strings.Cut(prompt, "  evidence: "); ok {
				line, _, _ := strings.Cut(rest, "\n")
				if len(line) > 30 {
					line = line[:30]
				}
				quote = line
			}
			a = map[string]any{"decision": "accept", "reason": "soak accepts " + tag, "citations": []map[string]string{{"quote": quote}}}
		}
		b, _ := json.Marshal(a)
		fmt.Printf("Soak decision.\n```json\n%s\n```\n", b)
		return true
	}
	return false
}
