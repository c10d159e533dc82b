// Command scale measures how a questbox daemon grows with the number of
// active quests and of nodes in the store: the tick's cost, the store's
// size, the bytes written to disk per tick (and per day at the default 1m
// tick), resident memory, and the time from start to ready.
//
// It drives the real binary from outside, through the CLI's API on the
// control socket, so it measures the public behaviour whatever the engine's
// internals are:
//
//   - seeding: -configs lists ACTIVE:NODES pairs. Each active quest gets
//     a few pending nodes; the rest of the nodes are pending nodes of
//     quests that are stopped (the tick must not look at them). Seeding
//     runs on the native binary; the store is then copied for each run,
//     and the copy synced and dropped from the page cache (settle), as a
//     device's store is when its daemon starts.
//   - the agents: an openai provider at a closed loopback port, so every
//     run ends at once with "unreachable", the node goes deferred and the
//     next tick dispatches it again: every tick dispatches once per active
//     quest (max_parallel = the active count) and commits, in a steady
//     state, without agent time. This is the worst case per tick: a real
//     agent keeps a quest busy for many ticks.
//   - ticks: POST /api/tick -ticks times (the daemon's own timer is set to
//     1000h so it never ticks by itself); the time is the client's, with
//     the socket round trip and the JSON of the tick's events.
//   - bytes written: write_bytes of /proc/PID/io over those ticks.
//   - start to ready: exec to the first answer of GET /api/quests, which
//     needs the opened store (the store's start-up check is part of it),
//     then VmRSS, RssAnon, RssFile.
//
// -agent command replaces the unreachable agent by a fast command agent: a
// real process per run (sh reading its prompt and answering a line the
// gate FAILs, so the node goes back to pending and the next tick
// dispatches it again), as a user configures one. Every run then records
// a judged result, through the group commit, and its log file, as on a busy box.
// With it the table also gives what a cycle of ticks and results costs:
// commits per tick (the store's own counter, questbox_store_commits_total
// on /metrics; each commit is two fdatasyncs, plus an fsync when the file
// grows) and the peak RSS over the measured ticks (VmHWM, reset before
// them through /proc/PID/clear_refs), and that peak's parts: RssAnon (heap,
// stacks) and RssFile (the binary, the store's mmap) sampled from
// /proc/PID/status every 5 ms during the measured ticks, each part's
// highest sample; the two maxima need not fall on the same sample, and a
// sampler can miss a spike shorter than its period, so VmHWM stays the
// total. The daemon's own CPU time per measured tick (utime + stime of
// /proc/PID/stat, without its agents') tells what the memory costs in GC.
// -strace runs each measured daemon
// under `strace -f --seccomp-bpf -c -e trace=fdatasync,fsync,syncfs` and prints
// its counts for the daemon's whole life next to the counter's, to check
// one against the other.
//
// -bin takes several binaries, comma separated (a build of main and one of
// a branch): each config is measured with each of them in turn, -rounds
// times, so that before and after share the machine's load.
//
// -qemu runs the daemon under qemu-user (e.g. "qemu-aarch64-static" with
// -bin dist/questbox-linux-arm64): a relative measure of Pi-class cost, not
// a Pi's numbers (the emulator translates every instruction, and its RSS
// includes its own).
//
//	go run ./bench/scale                                  # the default configs (a few minutes)
//	go run ./bench/scale -configs 1000:10000,1000:100000   # 1,000 active quests (~10 s a tick)
//	go run ./bench/scale -configs 10:1000000 -ticks 5      # one million nodes
//	make cross && go run ./bench/scale -bin dist/questbox-linux-arm64 -qemu qemu-aarch64-static
//	go run ./bench/scale -agent command -configs 1000:10000 -ticks 3 -rounds 3 -bin /tmp/before,/tmp/after
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/questbox/questbox/bench/internal/pagecache"
	"github.com/questbox/questbox/bench/internal/proc"
	"github.com/questbox/questbox/bench/internal/scratch"
	"github.com/questbox/questbox/ui/api"
)

func main() {
	// The default stays within a couple of minutes (make bench runs it);
	// bench/RESULTS.md gives the command lines of the larger runs.
	configs := flag.String("configs", "1:10000,10:10000,100:10000,10:100000", "ACTIVE:NODES pairs, comma separated")
	ticks := flag.Int("ticks", 20, "ticks measured per config")
	bins := flag.String("bin", "", "questbox binaries to measure, comma separated (default: build ./cmd/questbox)")
	qemu := flag.String("qemu", "", "run the measured daemon under this qemu-user (e.g. qemu-aarch64-static, or \"qemu-arm-static -cpu arm1176\")")
	agent := flag.String("agent", "unreachable", "the agents: unreachable (an openai provider on a closed port) or command (a real process per run)")
	rounds := flag.Int("rounds", 1, "times each config is measured with each binary, alternating")
	trace := flag.Bool("strace", false, "run each measured daemon under strace and count its fdatasync and fsync calls")
	keep := flag.Bool("keep", false, "keep the temporary directory")
	flag.Parse()
	o := opts{ticks: *ticks, qemu: *qemu, agent: *agent, rounds: *rounds, strace: *trace}
	if err := run(*configs, *bins, *keep, o); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

type config struct{ active, nodes int }

// opts are the flags that shape every measurement.
type opts struct {
	ticks  int
	qemu   string
	agent  string // "unreachable" or "command"
	rounds int
	strace bool
}

type result struct {
	config
	bin             string
	seed            time.Duration
	storeBytes      int64
	ready           time.Duration
	rss, anon, file int64 // KiB, after ready
	rssAfter        int64 // KiB, after the ticks
	peak            int64 // KiB, VmHWM over the measured ticks
	// KiB, the highest samples of RssAnon, RssFile and VmRSS over the
	// measured ticks (proc.Peak).
	peakAnon, peakFile, peakSampled int64
	tickMedian, tickP               int64 // microseconds
	writePerTick                    int64 // bytes
	// cpuPerTick is the daemon's own CPU time (utime + stime of
	// /proc/PID/stat, not its agents') over the measured ticks, per tick.
	cpuPerTick     time.Duration
	commitsPerTick float64
	// With -strace: the calls over the daemon's life, and the store's
	// commits counted by the daemon up to just before it was stopped.
	fdatasyncs, fsyncs, syncfses, lifeCommits int64
}

func run(list, bins string, keep bool, o opts) error {
	cfgs, err := parseConfigs(list)
	if err != nil {
		return err
	}
	if o.agent != "unreachable" && o.agent != "command" {
		return fmt.Errorf("-agent %q: want unreachable or command", o.agent)
	}
	if o.rounds < 1 {
		return fmt.Errorf("-rounds %d: want at least 1", o.rounds)
	}
	dir, done, err := scratch.Dir("qbscale", keep)
	if err != nil {
		return err
	}
	defer done()
	native, err := scratch.Daemon(dir)
	if err != nil {
		return err
	}
	measured, err := measuredBinaries(bins, native)
	if err != nil {
		return err
	}
	// A closed port for the agents: bound, then closed, so nothing answers.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	closed := l.Addr().String()
	l.Close()

	var results []result
	for i, c := range cfgs {
		rs, err := measureConfig(filepath.Join(dir, fmt.Sprint(i)), native, measured, closed, c, o)
		if err != nil {
			return err
		}
		results = append(results, rs...)
	}
	printResults(measured, results, o)
	return nil
}

// parseConfigs reads -configs: ACTIVE:NODES, comma-separated.
func parseConfigs(list string) ([]config, error) {
	var cfgs []config
	for _, p := range strings.Split(list, ",") {
		a, n, ok := strings.Cut(strings.TrimSpace(p), ":")
		active, err1 := strconv.Atoi(a)
		nodes, err2 := strconv.Atoi(n)
		if !ok || err1 != nil || err2 != nil || active < 1 || nodes < active {
			return nil, fmt.Errorf("config %q: want ACTIVE:NODES with NODES >= ACTIVE >= 1", p)
		}
		cfgs = append(cfgs, config{active, nodes})
	}
	return cfgs, nil
}

// measuredBinaries are the absolute paths of -bins, native for an empty
// entry; each must exist.
func measuredBinaries(bins, native string) ([]string, error) {
	var measured []string
	for _, b := range strings.Split(bins, ",") {
		if b = strings.TrimSpace(b); b == "" {
			b = native
		}
		b, err := filepath.Abs(b)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(b); err != nil {
			return nil, err
		}
		measured = append(measured, b)
	}
	return measured, nil
}

// measureConfig seeds a store of config c in cdir with the native binary,
// then measures each binary on a settled copy of it, o.rounds times.
func measureConfig(cdir, native string, measured []string, closed string, c config, o opts) ([]result, error) {
	cfg, err := writeConfig(cdir, c, o.agent, closed)
	if err != nil {
		return nil, err
	}
	seeded := filepath.Join(cdir, "seeded")
	took, err := seed(native, cfg, seeded, c)
	if err != nil {
		return nil, fmt.Errorf("%d active, %d nodes: seed: %w", c.active, c.nodes, err)
	}
	var results []result
	for round := range o.rounds {
		for j, bin := range measured {
			data := filepath.Join(cdir, fmt.Sprintf("data-%d-%d", round, j))
			if out, err := exec.Command("cp", "-a", seeded, data).CombinedOutput(); err != nil {
				return nil, fmt.Errorf("copy the seeded store: %v: %s", err, out)
			}
			if err := pagecache.Settle(filepath.Join(data, "questbox.db")); err != nil {
				return nil, fmt.Errorf("settle the copied store: %w", err)
			}
			r, err := measure(bin, cfg, data, c, o)
			if err != nil {
				return nil, fmt.Errorf("%d active, %d nodes, %s: %w", c.active, c.nodes, bin, err)
			}
			r.seed = took
			os.RemoveAll(data)
			results = append(results, r)
			fmt.Fprintf(os.Stderr, "scale: %s: %d active / %d nodes: tick %s median, %.1f commits/tick, peak RSS %d KiB (sampled %d: anon %d, file %d), CPU %s/tick, ready %s, RSS %d KiB, store %.1f MiB, %d B/tick\n",
				filepath.Base(bin), c.active, c.nodes, us(r.tickMedian), r.commitsPerTick, r.peak, r.peakSampled, r.peakAnon, r.peakFile, r.cpuPerTick.Round(time.Millisecond), r.ready.Round(time.Millisecond), r.rss, mib(r.storeBytes), r.writePerTick)
		}
	}
	return results, nil
}

// printResults prints the measured binaries and the results' tables.
func printResults(measured []string, results []result, o opts) {
	what := "native"
	if o.qemu != "" {
		what = "under " + o.qemu + " (emulated: a relative measure, not a Pi's numbers)"
	}
	for _, b := range measured {
		fi, _ := os.Stat(b)
		fmt.Printf("\nquestbox %s (%.1f MiB)", b, mib(fi.Size()))
	}
	fmt.Printf("\ndaemon %s, %s agents; %d ticks per config, each dispatching once per active quest\n\n", what, o.agent, o.ticks)
	fmt.Println("| binary | active quests | nodes | store | seed | start to ready | RSS ready (anon + file) | RSS after ticks | peak RSS of the ticks | its parts: max anon + max file (sampled peak) | tick median | tick p90 | daemon CPU per tick | commits per tick | written per tick | per day at 1m tick |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		fmt.Printf("| %s | %d | %d | %.1f MiB | %s | %s | %.1f MiB (%.1f + %.1f) | %.1f MiB | %.1f MiB | %.1f + %.1f MiB (%.1f) | %s | %s | %s | %.1f | %.1f KiB | %.0f MiB |\n",
			filepath.Base(r.bin), r.active, r.nodes, mib(r.storeBytes), r.seed.Round(100*time.Millisecond), r.ready.Round(time.Millisecond),
			float64(r.rss)/1024, float64(r.anon)/1024, float64(r.file)/1024, float64(r.rssAfter)/1024, float64(r.peak)/1024,
			float64(r.peakAnon)/1024, float64(r.peakFile)/1024, float64(r.peakSampled)/1024,
			us(r.tickMedian), us(r.tickP), r.cpuPerTick.Round(time.Millisecond), r.commitsPerTick, float64(r.writePerTick)/1024, float64(r.writePerTick)*1440/(1<<20))
	}
	if o.strace {
		fmt.Println("\nstrace over each measured daemon's life (start-up, the warm-up and measured ticks, shutdown), against the store's counter:")
		fmt.Println("\n| binary | active quests | fdatasync | fsync | syncfs | commits counted before the stop | 2 x commits |")
		fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
		for _, r := range results {
			fmt.Printf("| %s | %d | %d | %d | %d | %d | %d |\n", filepath.Base(r.bin), r.active, r.fdatasyncs, r.fsyncs, r.syncfses, r.lifeCommits, 2*r.lifeCommits)
		}
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func us(v int64) string {
	if v >= 10_000 {
		return fmt.Sprintf("%.1f ms", float64(v)/1000)
	}
	return fmt.Sprintf("%.2f ms", float64(v)/1000)
}

// daemon is a running `questbox run`.
type daemon struct {
	cmd    *exec.Cmd
	pid    int // the daemon's (cmd's own, or its child's under strace)
	client *api.Client
	listen string // the dashboard's address, for /metrics
	exited chan error
}

// start starts bin on cfg and data; under qemu when it is set, and under
// strace (writing its counts to straceOut) when that is set.
func start(bin, qemu, straceOut, cfg, data string) (*daemon, time.Duration, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, 0, err
	}
	listen := l.Addr().String()
	l.Close()
	argv := []string{bin, "run", "--config", cfg, "--data", data, "--tick", "1000h", "--gpio", "sim", "--listen", listen}
	if qemu != "" {
		argv = append(strings.Fields(qemu), argv...)
	}
	if straceOut != "" {
		argv = append([]string{"strace", "-f", "--seccomp-bpf", "-c", "-e", "trace=fdatasync,fsync,syncfs", "-o", straceOut}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	logf, err := os.Create(filepath.Join(filepath.Dir(data), filepath.Base(data)+".log"))
	if err != nil {
		return nil, 0, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	sock := filepath.Join(data, "questbox.sock")
	d := &daemon{cmd: cmd, client: api.NewClient(api.SocketClient(sock), sock), listen: listen, exited: make(chan error, 1)}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	d.pid = cmd.Process.Pid
	go func() { d.exited <- cmd.Wait(); logf.Close() }()
	deadline := time.Now().Add(30 * time.Minute) // 1M nodes under emulation take long
	for {
		select {
		case err := <-d.exited:
			return nil, 0, fmt.Errorf("the daemon exited: %v (see %s)", err, logf.Name())
		default:
		}
		// Ready: a request that needs the store answers (the control
		// socket answers earlier, while the store is opened and checked).
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := d.client.Quests(ctx)
		cancel()
		if err == nil {
			if straceOut != "" {
				// strace's only child is the daemon.
				b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", d.pid, d.pid))
				if d.pid, err = strconv.Atoi(strings.Fields(string(b) + " x")[0]); err != nil {
					d.stop()
					return nil, 0, fmt.Errorf("the daemon's pid under strace: %q", b)
				}
			}
			return d, time.Since(t0), nil
		}
		if strings.Contains(err.Error(), "waiting for its store") {
			// Refused, not slow: e.g. an older binary measured on a
			// store this tree seeded with a newer schema. It would wait
			// for a repair for ever.
			d.stop()
			return nil, 0, fmt.Errorf("the daemon refused the store: %v (measure an older binary with the harness of its own tree)", err)
		}
		if time.Now().After(deadline) {
			d.stop()
			return nil, 0, fmt.Errorf("not ready after 30 minutes: %v", err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (d *daemon) stop() error {
	// The daemon itself, not strace: strace writes its counts when the
	// daemon has gone.
	if p, err := os.FindProcess(d.pid); err == nil {
		p.Signal(os.Interrupt)
	}
	select {
	case err := <-d.exited:
		return err
	case <-time.After(5 * time.Minute):
		d.cmd.Process.Kill()
		return errors.New("the daemon did not stop within 5 minutes")
	}
}

// commits reads questbox_store_commits_total from the daemon's /metrics.
func (d *daemon) commits() (int64, error) {
	resp, err := http.Get("http://" + d.listen + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "questbox_store_commits_total "); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("/metrics (%s) has no questbox_store_commits_total", resp.Status)
}

// seed builds the store for c with the native binary in data and returns
// how long it took.
func seed(native, cfg, data string, c config) (time.Duration, error) {
	d, _, err := start(native, "", "", cfg, data)
	if err != nil {
		return 0, err
	}
	defer d.stop()
	ctx := context.Background()
	t0 := time.Now()
	const perActive = 5
	for i := range c.active {
		q, err := d.client.NewQuest(ctx, api.NewQuest{Name: fmt.Sprintf("active %d", i), Direction: fmt.Sprintf("scale direction %d", i)})
		if err != nil {
			return 0, fmt.Errorf("new quest: %w", err)
		}
		var hyps []string
		for j := range perActive {
			hyps = append(hyps, fmt.Sprintf("hypothesis %d of active quest %d", j, i))
		}
		if _, err := d.client.Scan(ctx, q.ID, hyps); err != nil {
			return 0, fmt.Errorf("scan: %w", err)
		}
	}
	// The rest: pending nodes of stopped quests, 20,000 per scan (a scan
	// request's body is bounded), 100,000 per quest.
	rest := c.nodes - c.active*perActive
	for q := 0; rest > 0; q++ {
		qq, err := d.client.NewQuest(ctx, api.NewQuest{Name: fmt.Sprintf("stopped %d", q), Direction: fmt.Sprintf("scale filler %d", q)})
		if err != nil {
			return 0, fmt.Errorf("new quest: %w", err)
		}
		if _, err := d.client.StopQuest(ctx, qq.ID, api.QuestCommand{}); err != nil {
			return 0, fmt.Errorf("stop: %w", err)
		}
		for in := 0; in < 100_000 && rest > 0; {
			n := min(20_000, rest, 100_000-in)
			hyps := make([]string, n)
			for j := range hyps {
				hyps[j] = fmt.Sprintf("filler hypothesis %d of quest %s", in+j, qq.ID)
			}
			if _, err := d.client.Scan(ctx, qq.ID, hyps); err != nil {
				return 0, fmt.Errorf("scan: %w", err)
			}
			in += n
			rest -= n
		}
	}
	return time.Since(t0), nil
}

// writeConfig writes the daemon's config for c into dir.
func writeConfig(dir string, c config, agent, closed string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	provider := fmt.Sprintf(`[providers.gone]
type = "openai"
base_url = "http://%s/v1"
model = "none"
api_key_env = ""
timeout = "5s"
`, closed)
	if agent == "command" {
		// A fast agent: reads its prompt, answers a line without JSON (a
		// FAIL: back to pending, dispatched again next tick). tries and
		// stalls are unbounded so that every tick dispatches every quest.
		argv, _ := json.Marshal([]string{"/bin/sh", "-c", "cat >/dev/null; echo 'no JSON in this answer'"})
		provider = fmt.Sprintf("[providers.gone]\ntype = \"command\"\nargv = %s\ntimeout = \"60s\"\n", argv)
	}
	conf := fmt.Sprintf(`[daemon]
max_parallel = %d
[dashboard]
read = "public"
[logs]
per_run = "16KiB"
[defaults]
mode = "solo"
provider = "gone"
roles = ["scout", "poc", "strategist"]
max_agent_runs = 1000000000
max_tries = 1000000
max_stalled = 1000000
token_budget = 1000000000
wall_clock = "100000h"
%s[network]
probe = ""
`, c.active, provider)
	cfg := filepath.Join(dir, "questbox.toml")
	return cfg, os.WriteFile(cfg, []byte(conf), 0o644)
}

func measure(bin, cfg, data string, c config, o opts) (result, error) {
	r := result{config: c, bin: bin}
	st, err := os.Stat(filepath.Join(data, "questbox.db"))
	if err != nil {
		return r, err
	}
	r.storeBytes = st.Size()
	straceOut := ""
	if o.strace {
		straceOut = data + ".strace"
	}
	d, ready, err := start(bin, o.qemu, straceOut, cfg, data)
	if err != nil {
		return r, err
	}
	stopped := false
	defer func() {
		if !stopped {
			d.stop()
		}
	}()
	r.ready = ready
	r.rss, r.anon, r.file = proc.Memory(d.pid)

	ctx := context.Background()
	// Two ticks to reach the steady state (every quest deferred, then back).
	for range 2 {
		if _, err := d.client.Tick(ctx); err != nil {
			return r, fmt.Errorf("tick: %w", err)
		}
	}
	w0 := proc.Numbers(d.pid, "io")["write_bytes:"]
	cpu0, err := cpuTime(d.pid)
	if err != nil {
		return r, err
	}
	c0, err := d.commits()
	if err != nil {
		return r, err
	}
	// VmHWM from here on: the peak of the measured ticks.
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", d.pid), []byte("5"), 0); err != nil {
		return r, fmt.Errorf("reset the peak RSS: %w", err)
	}
	sampler := proc.StartPeak(d.pid)
	var times []int64
	for range o.ticks {
		t0 := time.Now()
		rep, err := d.client.Tick(ctx)
		if err != nil {
			return r, fmt.Errorf("tick: %w", err)
		}
		times = append(times, time.Since(t0).Microseconds())
		if len(rep.Dispatched) != c.active {
			return r, fmt.Errorf("a tick dispatched %d nodes, want one per active quest (%d)", len(rep.Dispatched), c.active)
		}
	}
	r.writePerTick = (proc.Numbers(d.pid, "io")["write_bytes:"] - w0) / int64(o.ticks)
	cpu1, err := cpuTime(d.pid)
	if err != nil {
		return r, err
	}
	r.cpuPerTick = (cpu1 - cpu0) / time.Duration(o.ticks)
	c1, err := d.commits()
	if err != nil {
		return r, err
	}
	r.commitsPerTick = float64(c1-c0) / float64(o.ticks)
	slices.Sort(times)
	r.tickMedian = times[len(times)/2]
	r.tickP = times[len(times)*9/10]
	r.rssAfter, _, _ = proc.Memory(d.pid)
	r.peak = proc.Numbers(d.pid, "status")["VmHWM:"]
	r.peakAnon, r.peakFile, r.peakSampled = sampler.Stop()
	if o.strace {
		r.lifeCommits = c1
		stopped = true
		if err := d.stop(); err != nil {
			return r, err
		}
		b, err := os.ReadFile(straceOut)
		if err != nil {
			return r, err
		}
		r.fdatasyncs, r.fsyncs, r.syncfses = straceCalls(string(b), "fdatasync"), straceCalls(string(b), "fsync"), straceCalls(string(b), "syncfs")
	}
	return r, nil
}

// cpuTime is the CPU time the process itself used so far: utime + stime
// of /proc/PID/stat (its children's, cutime and cstime, are not counted).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces: the fields after it
	// start after its closing parenthesis, with field 3 (state).
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	const userHZ = 100 // sysconf(_SC_CLK_TCK) on Linux
	return time.Duration(utime+stime) * time.Second / userHZ, nil
}

// straceCalls reads the calls of syscall from strace -c's table.
func straceCalls(table, syscall string) int64 {
	for _, l := range strings.Split(table, "\n") {
		f := strings.Fields(l)
		if len(f) >= 5 && f[len(f)-1] == syscall {
			n, _ := strconv.ParseInt(f[3], 10, 64)
			return n
		}
	}
	return 0
}
