//go:build soak

package soak

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/questbox/questbox/internal/buildtest"
	"github.com/questbox/questbox/ui/api"
	"github.com/questbox/questbox/ui/mqtt/mosquittotest"
)

// TestSoak is the crash loop. Each cycle starts `questbox run --tick
// 200ms`, waits until it answers, checks every invariant, lets it work for a
// random moment (or kills it during an export, or while it starts), and
// SIGKILLs it. One cycle in three is chained instead: the daemon runs with a
// tick of an hour, so that nothing but one `questbox tick` through it
// dispatches, and everything after that tick's dispatches is follow-up work
// (a Team's next stages, a council's next members and its merge, a retry
// after a FAIL: docs/design.md, "When work is dispatched"); the kill lands
// at a random moment of those chains. After every restart:
//
//   - `questbox verify` exits 0 (pages and the hash-chained ledger);
//   - no terminal node changed: each terminal node's JSON equals what it was
//     the first time it was seen terminal, and it is still there;
//   - no node ran twice without a recorded run: the agent invocations the
//     agent logged for a node are at most the runs the store recorded for
//     it, and every run but the one in flight has an attempt in the node's
//     log (an interrupted one if the kill cut it short);
//   - the event seqs that reached the MQTT subscriber so far are 1..max,
//     with no hole (duplicates aside);
//   - `questbox export Q --out FILE` (one file per quest: each quest has its
//     own journal, so quests cannot share a file) exits 0, the file holds no
//     node twice, only terminal nodes, and every node that was terminal
//     before the export.
//
// At the end the daemon runs without kills until it is quiet, and every
// event seq from 1 to the last one must have reached the MQTT subscriber
// (duplicates allowed, de-duplicated by seq, with equal payloads). The
// outbox bound (engine/outbox.go) may drop node, quest and device events
// only past outbox_max undelivered events; the soak stays far below it, so
// any gap fails the test.
//
// SOAK_KILLS (default 300) sets the number of SIGKILLs; SOAK_SEED the seed.
func TestSoak(t *testing.T) {
	kills := envInt(t, "SOAK_KILLS", 300)
	seed := uint64(envInt(t, "SOAK_SEED", int(time.Now().UnixNano()%1e9)))
	t.Logf("soak: %d kills, SOAK_SEED=%d", kills, seed)
	s := newSoak(t, seed)
	s.loop(kills)
	s.finish()
}

func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == agentArg {
		os.Exit(agentMain(os.Args[2]))
	}
	code := m.Run()
	buildtest.Cleanup()
	os.Exit(code)
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a number", name, v)
	}
	return n
}

// activeQuests is how many quests the soak keeps active.
const activeQuests = 3

type soak struct {
	t      *testing.T
	r      *rand.Rand
	bin    string // the questbox binary
	dir    string // the agent's log, the config, the exports
	data   string
	cfg    string
	logf   *os.File // every daemon's output, appended
	sock   string
	client *api.Client
	broker *mosquittotest.Broker
	sub    *mosquittotest.Subscriber

	daemon *exec.Cmd
	exited chan struct{}

	terminal map[string][]byte // node id -> its JSON when first seen terminal
	cache    map[string]cached // quest id -> its nodes at the last look
	lastExp  map[string]int    // quest id -> nodes in its export file

	mqttSeen map[uint64]bool // event seqs the subscriber has had
	mqttMax  uint64
	mqttRead int // messages of the subscriber already looked at
	quests   int // quests created
	// tick is the daemon's --tick for the next start: 200ms, or an
	// hour for a chained cycle.
	tick string

	n counts
}

// counts are what the soak reports.
type counts struct {
	kills, startupKills, exportKills, restarts, checked, verifies, exports int
	questReads, socketTaken                                                int
	invocations                                                            int
	outcomes                                                               map[string]int
	interrupted                                                            int

	// chainKills are the kills of chained cycles; chainTicks the ticks of
	// those cycles that ended before the kill, and followUps the agent
	// runs those ticks did not dispatch themselves: the follow-up work.
	chainKills, chainTicks, followUps int
}

func newSoak(t *testing.T, seed uint64) *soak {
	s := &soak{t: t, tick: tickFast, r: rand.New(rand.NewPCG(seed, seed^0x5eed)), terminal: map[string][]byte{}, cache: map[string]cached{}, lastExp: map[string]int{}, mqttSeen: map[uint64]bool{}}
	s.n.outcomes = map[string]int{}
	// Short paths: the control socket's path must fit a sockaddr_un.
	dir, err := os.MkdirTemp("", "soak")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("soak: data kept in %s", dir)
			return
		}
		os.RemoveAll(dir)
	})
	s.dir, s.data = dir, filepath.Join(dir, "data")
	s.sock = filepath.Join(s.data, "questbox.sock")
	s.client = api.NewClient(api.SocketClient(s.sock), s.sock)
	for _, sub := range []string{"export", "agent"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s.bin = buildtest.Questbox(t)
	s.logf, err = os.Create(filepath.Join(dir, "daemon.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.logf.Close() })

	s.broker = mosquittotest.Start(t, mosquittotest.Options{})
	s.sub = s.broker.Subscribe(t, "questbox/soak/event/#")

	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s.cfg = filepath.Join(dir, "questbox.toml")
	conf := fmt.Sprintf(`[daemon]
device_id = "soak"
max_parallel = 3
grace = "1s"

[defaults]
mode = "solo"
provider = "soak"
roles = ["scout", "poc", "strategist"]
gate = "soak"
max_agent_runs = 40
max_tries = 3

[providers.soak]
type = "command"
argv = [%q, %q, %q]
env = []
timeout = "1s"
output_cap = "64KiB"
# The agents run confined: the one directory they may write besides
# their own is where they log their invocations.
write = [%q]

[gates.soak]
rules = [
  { id = "contract", kind = "contract", level = "fail" },
  { id = "evidence", kind = "evidence-length", level = "fail", params = { min = 20, max = 20000 } },
  { id = "fresh", kind = "fresh-directions", level = "fail" },
  { id = "cites", kind = "citations-present", level = "fail" },
  { id = "review", kind = "regex", level = "review", params = { field = "evidence", pattern = %q, mode = "must_not_match" } },
]

[network]
probe = ""

[gpio]
backend = "sim"
consent_expiry = "2s"

[mqtt]
broker = %q
reconnect_max = "1s"
discovery = false
`, self, agentArg, s.agentDir(), s.agentDir(), reviewMark, s.broker.URL())
	if err := os.WriteFile(s.cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.killOrphans)
	// A failed check stops the test with the daemon running: end it.
	t.Cleanup(func() {
		if s.exited == nil {
			return
		}
		select {
		case <-s.exited:
		default:
			s.daemon.Process.Signal(syscall.SIGKILL)
			<-s.exited
		}
	})
	return s
}

// start execs the daemon; it does not wait for it to be ready.
func (s *soak) start() {
	s.t.Helper()
	fmt.Fprintf(s.logf, "=== soak: start (kills so far %d)\n", s.n.kills)
	s.daemon = exec.Command(s.bin, "run", "--config", s.cfg, "--data", s.data, "--tick", s.tick)
	s.daemon.Stdout, s.daemon.Stderr = s.logf, s.logf
	if err := s.daemon.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.exited = make(chan struct{})
	go func(c *exec.Cmd, done chan struct{}) { c.Wait(); close(done) }(s.daemon, s.exited)
	s.n.restarts++
}

// ready polls the daemon's API until it answers. The bound only turns a
// wedged daemon into a failure.
//
// One refusal is tolerated and counted: right after a SIGKILL the control
// socket can still accept a connection for a moment (seen three times in
// about a thousand kills, with the dashboard merged), and the new daemon exits 2
// with "another questbox daemon answers on the control socket", as the
// README documents for a second daemon; systemd would start it again, and
// so does the soak, once that socket stops answering.
func (s *soak) ready() {
	s.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		select {
		case <-s.exited:
			if s.socketTaken() && s.n.socketTaken < 10 {
				s.n.socketTaken++
				fmt.Fprintf(s.logf, "=== soak: the control socket still answered; starting again\n")
				s.waitSocketFree()
				s.start()
				s.n.restarts-- // the same restart
				continue
			}
			s.fatalf("the daemon exited before it was ready: %v", s.daemon.ProcessState)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := s.client.Health(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			s.fatalf("the daemon did not answer within a minute: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// socketTaken reports whether the daemon that just exited refused to start
// because something answered on its control socket.
func (s *soak) socketTaken() bool {
	ws, ok := s.daemon.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || ws.ExitStatus() != 2 {
		return false
	}
	s.logf.Sync()
	b, _ := os.ReadFile(s.logf.Name())
	tail := b[max(0, len(b)-1000):]
	return bytes.Contains(tail, []byte("another questbox daemon answers on the control socket"))
}

// waitSocketFree polls until nothing accepts on the control socket (bounded).
func (s *soak) waitSocketFree() {
	t0 := time.Now()
	for deadline := t0.Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		c, err := net.DialTimeout("unix", s.sock, time.Second)
		if err != nil {
			fmt.Fprintf(s.logf, "=== soak: the control socket stopped answering after %v more\n", time.Since(t0))
			return
		}
		c.Close()
	}
	s.fatalf("something still answers on the control socket %s 30 s after the daemon was killed", s.sock)
}

// kill SIGKILLs the daemon and reaps it.
func (s *soak) kill() {
	s.t.Helper()
	if err := s.daemon.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		s.t.Fatal(err)
	}
	<-s.exited
	if ws, ok := s.daemon.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		s.fatalf("the daemon had exited by itself before the kill: %v", s.daemon.ProcessState)
	}
	s.n.kills++
	fmt.Fprintf(s.logf, "=== soak: SIGKILL %d\n", s.n.kills)
}

func (s *soak) fatalf(format string, args ...any) {
	s.t.Helper()
	s.logf.Sync()
	b, _ := os.ReadFile(s.logf.Name())
	if len(b) > 8000 {
		b = b[len(b)-8000:]
	}
	s.t.Fatalf("after %d kills: %s\ndaemon log tail:\n%s", s.n.kills, fmt.Sprintf(format, args...), b)
}

func (s *soak) sleep(max time.Duration) {
	time.Sleep(time.Duration(s.r.Int64N(int64(max) + 1)))
}

// The daemon's ticks: fast for the ordinary cycles; an hour, so that it
// never comes, for the chained ones.
const (
	tickFast  = "200ms"
	tickNever = "1h"
)

// loop is the crash loop: n kills.
func (s *soak) loop(n int) {
	began := time.Now()
	for s.n.kills < n {
		chained := s.n.restarts > 0 && s.r.IntN(3) == 0
		s.tick = tickFast
		if chained {
			s.tick = tickNever
		}
		s.start()
		if s.n.restarts > 1 && s.r.IntN(8) == 0 {
			// Kill it while it starts: opening the store, recovering the
			// runs the last kill interrupted.
			s.sleep(60 * time.Millisecond)
			s.kill()
			s.n.startupKills++
			continue
		}
		s.ready()
		s.check(s.n.checked%fullEvery == 0)
		s.keepQuests()
		switch {
		case chained:
			s.killDuringChains()
		case s.r.IntN(4) == 0 && s.quests > 0:
			s.killDuringExport()
		default:
			s.sleep(700 * time.Millisecond)
			s.kill()
		}
		if s.n.kills%50 == 0 {
			_, runs := s.invocations()
			s.t.Logf("soak: %d kills, %d checked restarts, %d agent runs, %d quests, %d terminal nodes, %d MQTT messages, %v",
				s.n.kills, s.n.checked, len(runs), s.quests, len(s.terminal), len(s.sub.Messages()), time.Since(began).Round(time.Second))
		}
	}
}

// killDuringChains ticks once through the daemon, whose own tick never
// comes, and kills it at a random moment of the follow-up work that tick's
// results enable. A tick whose runs and chains all ended before the kill
// (the CLI's tick waits for them) counts its follow-up runs: the agent
// runs it did not dispatch itself.
func (s *soak) killDuringChains() {
	_, before := s.invocations()
	cmd := exec.Command(s.bin, "tick", "--json", "--config", s.cfg, "--data", s.data)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	ended := false
	var err error
	select {
	case err = <-done:
		ended = true
	case <-time.After(time.Duration(s.r.Int64N(int64(1500 * time.Millisecond)))):
	}
	s.kill()
	if !ended {
		<-done // exit 0 or not: the kill may end it either way
	}
	s.n.chainKills++
	var t api.Tick
	if !ended || err != nil || json.Unmarshal(out.Bytes(), &t) != nil {
		return
	}
	_, after := s.invocations()
	s.n.chainTicks++
	s.n.followUps += max(0, len(after)-len(before)-len(t.Dispatched))
}

// killDuringExport starts an export and kills the daemon at a random
// moment of it.
func (s *soak) killDuringExport() {
	q := fmt.Sprintf("q%d", 1+s.r.IntN(s.quests))
	cmd := exec.Command(s.bin, "export", q, "--out", s.exportFile(q), "--config", s.cfg, "--data", s.data)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.sleep(25 * time.Millisecond)
	s.kill()
	cmd.Wait() // exit 0 or 2: either is fine, the next export repairs the file
	s.n.exportKills++
}

func (s *soak) exportFile(q string) string { return filepath.Join(s.dir, "export", q+".jsonl") }

// agentDir is the soak agent's directory, the one it may write (its
// invocations.log).
func (s *soak) agentDir() string { return filepath.Join(s.dir, "agent") }

// cli runs the questbox binary and returns its exit code and output.
func (s *soak) cli(args ...string) (int, string) {
	cmd := exec.Command(s.bin, append(args, "--config", s.cfg, "--data", s.data)...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		s.t.Fatal(err)
	}
	return 0, string(out)
}

// keepQuests creates quests until activeQuests are active.
func (s *soak) keepQuests() {
	qs := s.quest()
	active := 0
	for _, q := range qs {
		if q.Status == "active" {
			active++
		}
	}
	for ; active < activeQuests; active++ {
		name := fmt.Sprintf("soak %d", s.quests+1)
		args := []string{"quest", "new", name, "--direction", "survive " + name + " through kill -9", "--json"}
		switch s.quests % 6 {
		case 2:
			// A team whose owner turns are councils (docs/design.md,
			// "Councils and Teams"): members run concurrently and are killed
			// mid-vote like any run (the soak agent plays them too).
			args = append(args, "--mode", "team", "--roles", "scout,poc,owner", "--council", "reviewer:1,judge:2")
		case 5:
			// Teams (v3.2): killed between and during their stages.
			args = append(args, "--preset", "teams", "--roles", "scout,poc,owner")
		}
		code, out := s.cli(args...)
		if code != 0 {
			s.fatalf("quest new: exit %d: %s", code, out)
		}
		s.quests++
	}
}

func (s *soak) quest() []api.Quest {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	qs, err := s.client.Quests(ctx)
	if err != nil {
		s.fatalf("quest list: %v", err)
	}
	return qs
}

// snapshot is every node of every quest, by id. To keep a cycle's cost
// flat as finished quests pile up, a quest that is not active and whose
// record has not changed since the last look is taken from the last look,
// except at every fullEvery-th check, which reads everything.
func (s *soak) snapshot(full bool) map[string]api.Node {
	s.t.Helper()
	nodes := map[string]api.Node{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, q := range s.quest() {
		c, ok := s.cache[q.ID]
		if full || !ok || q.Status == "active" || !c.updated.Equal(q.Updated) {
			d, err := s.client.Quest(ctx, q.ID)
			if err != nil {
				s.fatalf("quest show %s: %v", q.ID, err)
			}
			c = cached{updated: q.Updated, nodes: d.Nodes}
			s.cache[q.ID] = c
			s.n.questReads++
		}
		for _, n := range c.nodes {
			nodes[n.ID] = n
		}
	}
	return nodes
}

// fullEvery is how often a check reads every quest and exports every one.
const fullEvery = 10

type cached struct {
	updated time.Time
	nodes   []api.Node
}

// invocations reads the agent's log: runs per node.
func (s *soak) invocations() (map[string]int, []string) {
	s.t.Helper()
	b, err := os.ReadFile(filepath.Join(s.agentDir(), "invocations.log"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		s.t.Fatal(err)
	}
	per := map[string]int{}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) != 3 {
			continue // the last line may be in the middle of its write
		}
		per[f[0]]++
		lines = append(lines, l)
	}
	return per, lines
}

// check runs every per-restart invariant against the running daemon; a
// full check reads and exports every quest (see snapshot).
func (s *soak) check(full bool) {
	s.t.Helper()
	// The agent's log first, then the store: every invocation read here
	// started before the snapshot, so its run is in the snapshot.
	inv, _ := s.invocations()
	nodes := s.snapshot(full)
	terminalIn := map[string]int{}
	for _, n := range nodes {
		if n.Terminal {
			terminalIn[n.Quest]++
		}
	}

	if code, out := s.cli("verify"); code != 0 {
		s.fatalf("questbox verify: exit %d:\n%s", code, out)
	}
	s.n.verifies++

	s.checkTerminalUnchanged(nodes)
	for id, n := range nodes {
		s.checkRuns(id, n, inv[id])
	}
	for id, k := range inv {
		if id == unknownNode {
			continue // the kill cut the prompt short: counted, not attributed
		}
		if _, ok := nodes[id]; !ok {
			s.fatalf("the agent ran node %s %d times, and the store has no such node", id, k)
		}
	}
	s.checkExports(nodes, terminalIn, full)
	s.checkMQTTSoFar()
	s.n.checked++
}

// checkTerminalUnchanged fails when a node that was terminal at an
// earlier check is gone or changed in any byte.
func (s *soak) checkTerminalUnchanged(nodes map[string]api.Node) {
	for id, old := range s.terminal {
		n, ok := nodes[id]
		if !ok {
			s.fatalf("terminal node %s is gone", id)
		}
		if b, _ := json.Marshal(n); !bytes.Equal(b, old) {
			s.fatalf("terminal node %s changed:\nwas %s\nnow %s", id, old, b)
		}
	}
}

// checkRuns remembers node id when it is terminal, and checks its runs:
// no more agent invocations (ran) than runs recorded, and every run but
// the one in flight ended in an attempt.
func (s *soak) checkRuns(id string, n api.Node, ran int) {
	if n.Terminal {
		if _, ok := s.terminal[id]; !ok {
			s.terminal[id], _ = json.Marshal(n)
		}
	}
	if ran > len(n.Runs) {
		s.fatalf("node %s: the agent ran %d times, the store records %d runs: %+v", id, ran, len(n.Runs), n)
	}
	// Identical attempts that use no try are merged into one (Repeats
	// counts the others, Run names the latest), so a run missing from
	// the log must be one of those repeats.
	attempted, repeats := map[string]bool{}, 0
	for _, a := range n.Attempts {
		attempted[a.Run] = true
		repeats += a.Repeats
	}
	var unlogged []string
	for i, r := range n.Runs {
		inFlight := i == len(n.Runs)-1 && n.Status == "running"
		if !attempted[r] && !inFlight {
			unlogged = append(unlogged, r)
		}
	}
	if len(unlogged) > repeats {
		s.fatalf("node %s (%s): runs %v have no attempt in its log (%d repeats): %+v", id, n.Status, unlogged, repeats, n.Attempts)
	}
}

// checkExports exports into one file per quest, then checks the file:
// every quest at a full check; else those with nodes locked since their
// last export, and one other at random (a second export must add
// nothing).
func (s *soak) checkExports(nodes map[string]api.Node, terminalIn map[string]int, full bool) {
	other := fmt.Sprintf("q%d", 1+s.r.IntN(max(s.quests, 1)))
	for q := 1; q <= s.quests; q++ {
		id := fmt.Sprintf("q%d", q)
		if !full && id != other && terminalIn[id] == s.lastExp[id] {
			continue
		}
		if code, out := s.cli("export", id, "--out", s.exportFile(id)); code != 0 {
			s.fatalf("export %s: exit %d: %s", id, code, out)
		}
		s.n.exports++
		got := s.exported(id)
		s.checkExport(id, got, nodes)
		s.lastExp[id] = len(got)
	}
}

// checkExport checks quest id's export (got, the times each node is in
// it) against the snapshot: each node once, and terminal, and every
// terminal node of the quest in it.
func (s *soak) checkExport(id string, got map[string]int, nodes map[string]api.Node) {
	for nid, k := range got {
		if k != 1 {
			s.fatalf("export of %s has node %s %d times", id, nid, k)
		}
		if n, ok := nodes[nid]; ok && !n.Terminal {
			// Locked after the snapshot? It must be terminal now.
			if now := s.node(nid); !now.Terminal {
				s.fatalf("export of %s has node %s, which is %s", id, nid, now.Status)
			}
		}
	}
	for nid, n := range nodes {
		if n.Quest == id && n.Terminal && got[nid] == 0 {
			s.fatalf("export of %s skipped terminal node %s", id, nid)
		}
	}
}

// checkMQTTSoFar reads what MQTT delivered since the last check: the
// publisher sends in seq order from its cursor, so whatever has arrived
// is 1..max with no hole, duplicates aside.
func (s *soak) checkMQTTSoFar() {
	msgs := s.sub.Messages()
	for _, m := range msgs[s.mqttRead:] {
		seq, _ := seqOf(s.t, m)
		s.mqttSeen[seq] = true
		s.mqttMax = max(s.mqttMax, seq)
	}
	s.mqttRead = len(msgs)
	if uint64(len(s.mqttSeen)) != s.mqttMax {
		for seq := uint64(1); seq <= s.mqttMax; seq++ {
			if !s.mqttSeen[seq] {
				s.fatalf("MQTT has seqs up to %d but not %d", s.mqttMax, seq)
			}
		}
	}
}

func (s *soak) node(id string) api.Node {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := s.client.Node(ctx, id)
	if err != nil {
		s.fatalf("node %s: %v", id, err)
	}
	return n
}

// exported counts the node ids in quest q's export file.
func (s *soak) exported(q string) map[string]int {
	s.t.Helper()
	got := map[string]int{}
	f, err := os.Open(s.exportFile(q))
	if errors.Is(err, os.ErrNotExist) {
		return got
	}
	if err != nil {
		s.t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		if bytes.HasPrefix(sc.Bytes(), []byte(`{"export_seal":`)) {
			continue // a batch's signature (docs/ledger.md), not a node
		}
		var n struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &n); err != nil || n.ID == "" {
			s.fatalf("export of %s: a line that is not a node (%v): %.200q", q, err, sc.Text())
		}
		got[n.ID]++
	}
	if err := sc.Err(); err != nil {
		s.t.Fatal(err)
	}
	return got
}

// quiet stops every active quest, so nothing is dispatched any more, and
// waits for the runs in flight (a hang ends at the 1s timeout) and for
// MQTT to have every event; it returns the last event's seq.
func (s *soak) quiet(ctx context.Context) uint64 {
	for _, q := range s.quest() {
		if q.Status == "active" {
			if _, err := s.client.StopQuest(ctx, q.ID, api.QuestCommand{}); err != nil {
				s.fatalf("quest stop %s: %v", q.ID, err)
			}
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		running := 0
		for _, q := range s.quest() {
			if q.Running != "" {
				running++
			}
		}
		last := s.lastSeq(ctx)
		if running == 0 && last > 0 && s.maxSeenSeq() >= last {
			return last
		}
		if time.Now().After(deadline) {
			s.fatalf("not quiet after 2 minutes: %d runs in flight, last seq %d, MQTT has up to %d", running, last, s.maxSeenSeq())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stopClean stops the daemon with SIGTERM and verifies the store it
// leaves.
func (s *soak) stopClean() {
	if err := s.daemon.Process.Signal(syscall.SIGTERM); err != nil {
		s.t.Fatal(err)
	}
	<-s.exited
	if !s.daemon.ProcessState.Success() {
		s.fatalf("the daemon's clean stop: %v", s.daemon.ProcessState)
	}
	if code, out := s.cli("verify"); code != 0 {
		s.fatalf("questbox verify after the clean stop: exit %d:\n%s", code, out)
	}
}

// checkFinalExports checks every terminal node is exactly once in its
// quest's file, and returns how many were exported.
func (s *soak) checkFinalExports() (exported int) {
	for q := 1; q <= s.quests; q++ {
		id := fmt.Sprintf("q%d", q)
		for nid, k := range s.exported(id) {
			if k != 1 {
				s.fatalf("final export of %s has %s %d times", id, nid, k)
			}
			if _, ok := s.terminal[nid]; !ok {
				s.fatalf("final export of %s has %s, which never was terminal", id, nid)
			}
			exported++
		}
	}
	if exported != len(s.terminal) {
		s.fatalf("exported %d nodes, %d are terminal", exported, len(s.terminal))
	}
	return exported
}

// checkFinalMQTT checks MQTT had seqs 1..last, each at least once,
// duplicates identical; it returns the messages, the payload of each
// seq, the number of duplicates and the events by kind.
func (s *soak) checkFinalMQTT(last uint64) (msgs []mosquittotest.Message, bySeq map[uint64]string, dups int, kinds map[string]int) {
	msgs = s.sub.Messages()
	bySeq, kinds = map[uint64]string{}, map[string]int{}
	for _, m := range msgs {
		seq, kind := seqOf(s.t, m)
		if prev, ok := bySeq[seq]; ok {
			dups++
			if sameEvent(prev) != sameEvent(m.Payload) {
				s.fatalf("seq %d arrived twice with different payloads:\n%s\n%s", seq, prev, m.Payload)
			}
			continue
		}
		bySeq[seq] = m.Payload
		kinds[kind]++
	}
	var missing []uint64
	for seq := uint64(1); seq <= last; seq++ {
		if _, ok := bySeq[seq]; !ok {
			missing = append(missing, seq)
		}
	}
	if len(missing) > 0 {
		s.fatalf("%d of %d event seqs never reached MQTT (the outbox bound was not reached, so none may be dropped): first %v",
			len(missing), last, missing[:min(len(missing), 20)])
	}
	return msgs, bySeq, dups, kinds
}

// finish lets one daemon run to quiet, then checks the outbox reached MQTT
// and prints the counts.
func (s *soak) finish() {
	s.tick = tickFast
	s.t.Helper()
	s.start()
	s.ready()
	s.check(true)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	last := s.quiet(ctx)
	s.check(true) // the last runs' verdicts exported too
	s.stopClean()
	exported := s.checkFinalExports()
	msgs, bySeq, dups, kinds := s.checkFinalMQTT(last)

	// The chained cycles must have chained: ticks with Teams, councils
	// and FAILs to retry whose results enabled no follow-up run at all
	// would mean the soak never killed a chain.
	if s.n.chainTicks >= 5 && s.n.followUps == 0 {
		s.fatalf("%d chained ticks ended before their kill, and no agent ran beyond their own dispatches: no follow-up work was dispatched", s.n.chainTicks)
	}

	// The counts.
	inv, lines := s.invocations()
	for _, l := range lines {
		s.n.outcomes[strings.Fields(l)[2]]++
	}
	s.n.invocations = len(lines)
	nodes := s.snapshotFromStore()
	status := map[string]int{}
	for _, n := range nodes {
		status[string(n.Status)]++
		for _, a := range n.Attempts {
			if a.Outcome == "interrupted" {
				s.n.interrupted++
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "SOAK RESULT: %d SIGKILLs survived (%d while starting, %d during an export, %d during follow-up chains, %d at a random moment while ticking)\n",
		s.n.kills, s.n.startupKills, s.n.exportKills, s.n.chainKills, s.n.kills-s.n.startupKills-s.n.exportKills-s.n.chainKills)
	fmt.Fprintf(&b, "  chained cycles: %d ticks through the daemon ended before their kill, and their results' follow-up work ran %d agent runs\n", s.n.chainTicks, s.n.followUps)
	fmt.Fprintf(&b, "  restarts refused because the control socket still answered (started again): %d\n", s.n.socketTaken)
	fmt.Fprintf(&b, "  restarts %d, restarts checked %d, verify runs %d (all exit 0), exports %d, quest reads %d\n", s.n.restarts, s.n.checked, s.n.verifies, s.n.exports, s.n.questReads)
	fmt.Fprintf(&b, "  quests %d; nodes %d by status %s\n", s.quests, len(nodes), fmtMap(status))
	fmt.Fprintf(&b, "  agent runs %d by outcome %s; interrupted attempts recorded %d; agents whose prompt the kill cut short %d\n",
		s.n.invocations, fmtMap(s.n.outcomes), s.n.interrupted, inv[unknownNode])
	fmt.Fprintf(&b, "  terminal nodes %d, never changed; exported %d, each exactly once\n", len(s.terminal), exported)
	fmt.Fprintf(&b, "  events: last seq %d; MQTT messages %d, %d duplicates, %d distinct seqs, no gap; by kind %s\n",
		last, len(msgs), dups, len(bySeq), fmtMap(kinds))
	s.t.Log("\n" + b.String())
	fmt.Print(b.String())
}

// snapshotFromStore reads the nodes with the CLI, the daemon stopped.
func (s *soak) snapshotFromStore() []api.Node {
	var all []api.Node
	for q := 1; q <= s.quests; q++ {
		code, out := s.cli("quest", "show", fmt.Sprintf("q%d", q), "--json")
		if code != 0 {
			s.fatalf("quest show: exit %d: %s", code, out)
		}
		var d api.QuestDetail
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			s.t.Fatal(err)
		}
		all = append(all, d.Nodes...)
	}
	return all
}

func (s *soak) lastSeq(ctx context.Context) uint64 {
	since := s.maxSeenSeq()
	for {
		page, err := s.client.Events(ctx, since, 1000)
		if err != nil {
			s.fatalf("events since %d: %v", since, err)
		}
		if len(page.Events) == 0 {
			return since
		}
		since = page.Events[len(page.Events)-1].Seq
	}
}

func (s *soak) maxSeenSeq() uint64 {
	var m uint64
	for _, msg := range s.sub.Messages() {
		seq, _ := seqOf(s.t, msg)
		m = max(m, seq)
	}
	return m
}

func seqOf(t *testing.T, m mosquittotest.Message) (uint64, string) {
	var ev api.Event
	if err := json.Unmarshal([]byte(m.Payload), &ev); err != nil || ev.Seq == 0 {
		t.Fatalf("%s: not an event (%v): %s", m.Topic, err, m.Payload)
	}
	return ev.Seq, string(ev.Kind)
}

// sameEvent is an event's payload without what its publisher worked out
// when it sent it: the view of the consent request it asks for
// (docs/consent.md: its age, the time left, and none once the request
// was answered or expired), which an event sent again after a reconnect
// tells anew. What the event says is the rest.
func sameEvent(payload string) string {
	var ev map[string]any
	if err := json.Unmarshal([]byte(payload), &ev); err != nil {
		return payload
	}
	delete(ev, "consent")
	b, _ := json.Marshal(ev)
	return string(b)
}

func fmtMap(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

// killOrphans ends agents a SIGKILL of the daemon left behind (they run
// in their own process groups; a hanging one ends by itself after
// agentHang anyway).
func (s *soak) killOrphans() {
	_, lines := s.invocations()
	for _, l := range lines {
		pid, err := strconv.Atoi(strings.Fields(l)[1])
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && bytes.Contains(cmdline, []byte(agentArg)) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
