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
//     runs on the native binary; the store is then copied for each run.
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
// -qemu runs the daemon under qemu-user (e.g. "qemu-aarch64-static" with
// -bin dist/questbox-linux-arm64): a relative measure of Pi-class cost, not
// a Pi's numbers (the emulator translates every instruction, and its RSS
// includes its own).
//
//	go run ./bench/scale                                  # the default configs (a few minutes)
//	go run ./bench/scale -configs 1000:10000,1000:100000   # 1,000 active quests (~10 s a tick)
//	go run ./bench/scale -configs 10:1000000 -ticks 5      # one million nodes
//	make cross && go run ./bench/scale -bin dist/questbox-linux-arm64 -qemu qemu-aarch64-static
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/questbox/questbox/ui/api"
)

func main() {
	// The default stays within a couple of minutes (make bench runs it);
	// bench/RESULTS.md gives the command lines of the larger runs.
	configs := flag.String("configs", "1:10000,10:10000,100:10000,10:100000", "ACTIVE:NODES pairs, comma separated")
	ticks := flag.Int("ticks", 20, "ticks measured per config")
	bin := flag.String("bin", "", "questbox binary to measure (default: build ./cmd/questbox)")
	qemu := flag.String("qemu", "", "run the measured daemon under this qemu-user (e.g. qemu-aarch64-static, or \"qemu-arm-static -cpu arm1176\")")
	keep := flag.Bool("keep", false, "keep the temporary directory")
	flag.Parse()
	if err := run(*configs, *ticks, *bin, *qemu, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

type config struct{ active, nodes int }

type result struct {
	config
	seed              time.Duration
	storeBytes        int64
	ready             time.Duration
	rss, anon, file   int64 // KiB, after ready
	rssAfter          int64 // KiB, after the ticks
	tickMedian, tickP int64 // microseconds
	writePerTick      int64 // bytes
}

func run(list string, ticks int, bin, qemu string, keep bool) error {
	var cfgs []config
	for _, p := range strings.Split(list, ",") {
		a, n, ok := strings.Cut(strings.TrimSpace(p), ":")
		active, err1 := strconv.Atoi(a)
		nodes, err2 := strconv.Atoi(n)
		if !ok || err1 != nil || err2 != nil || active < 1 || nodes < active {
			return fmt.Errorf("config %q: want ACTIVE:NODES with NODES >= ACTIVE >= 1", p)
		}
		cfgs = append(cfgs, config{active, nodes})
	}
	dir, err := os.MkdirTemp("", "qbscale")
	if err != nil {
		return err
	}
	if keep {
		fmt.Fprintln(os.Stderr, "keeping", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	native := filepath.Join(dir, "questbox")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", native, "./cmd/questbox")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build: %w", err)
	}
	if bin == "" {
		bin = native
	}
	if bin, err = filepath.Abs(bin); err != nil {
		return err
	}
	fi, err := os.Stat(bin)
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
		r, err := measure(filepath.Join(dir, fmt.Sprint(i)), native, bin, qemu, closed, c, ticks)
		if err != nil {
			return fmt.Errorf("%d active, %d nodes: %w", c.active, c.nodes, err)
		}
		results = append(results, r)
		fmt.Fprintf(os.Stderr, "scale: %d active / %d nodes: tick %s median, ready %s, RSS %d KiB, store %.1f MiB, %d B/tick\n",
			c.active, c.nodes, us(r.tickMedian), r.ready.Round(time.Millisecond), r.rss, mib(r.storeBytes), r.writePerTick)
	}
	what := "native"
	if qemu != "" {
		what = "under " + qemu + " (emulated: a relative measure, not a Pi's numbers)"
	}
	fmt.Printf("\nquestbox %s (%.1f MiB), daemon %s; %d ticks per config, each dispatching once per active quest\n\n",
		filepath.Base(bin), mib(fi.Size()), what, ticks)
	fmt.Println("| active quests | nodes | store | seed | start to ready | RSS ready (anon + file) | RSS after ticks | tick median | tick p90 | written per tick | per day at 1m tick |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		fmt.Printf("| %d | %d | %.1f MiB | %s | %s | %.1f MiB (%.1f + %.1f) | %.1f MiB | %s | %s | %.1f KiB | %.0f MiB |\n",
			r.active, r.nodes, mib(r.storeBytes), r.seed.Round(100*time.Millisecond), r.ready.Round(time.Millisecond),
			float64(r.rss)/1024, float64(r.anon)/1024, float64(r.file)/1024, float64(r.rssAfter)/1024,
			us(r.tickMedian), us(r.tickP), float64(r.writePerTick)/1024, float64(r.writePerTick)*1440/(1<<20))
	}
	return nil
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
	client *api.Client
	exited chan error
}

func start(bin, qemu, cfg, data string) (*daemon, time.Duration, error) {
	args := []string{"run", "--config", cfg, "--data", data, "--tick", "1000h", "--gpio", "sim"}
	var cmd *exec.Cmd
	if qemu != "" {
		q := strings.Fields(qemu)
		cmd = exec.Command(q[0], append(append(q[1:], bin), args...)...)
	} else {
		cmd = exec.Command(bin, args...)
	}
	logf, err := os.Create(filepath.Join(filepath.Dir(data), "daemon.log"))
	if err != nil {
		return nil, 0, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	sock := filepath.Join(data, "questbox.sock")
	d := &daemon{cmd: cmd, client: api.NewClient(api.SocketClient(sock), sock), exited: make(chan error, 1)}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
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
			return d, time.Since(t0), nil
		}
		if time.Now().After(deadline) {
			d.stop()
			return nil, 0, fmt.Errorf("not ready after 30 minutes: %v", err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (d *daemon) stop() error {
	d.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-d.exited:
		return err
	case <-time.After(5 * time.Minute):
		d.cmd.Process.Kill()
		return errors.New("the daemon did not stop within 5 minutes")
	}
}

// seed builds the store for c with the native binary and returns how long
// it took.
func seed(native, cfg, data string, c config) (time.Duration, error) {
	d, _, err := start(native, "", cfg, data)
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

func measure(dir, native, bin, qemu, closed string, c config, ticks int) (result, error) {
	r := result{config: c}
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return r, err
	}
	cfg := filepath.Join(dir, "questbox.toml")
	conf := fmt.Sprintf(`[daemon]
max_parallel = %d
[defaults]
mode = "solo"
provider = "gone"
roles = ["scout", "poc", "strategist"]
max_agent_runs = 1000000000
token_budget = 1000000000
wall_clock = "100000h"
[providers.gone]
type = "openai"
base_url = "http://%s/v1"
model = "none"
api_key_env = ""
timeout = "5s"
[network]
probe = ""
`, c.active, closed)
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		return r, err
	}
	var err error
	if r.seed, err = seed(native, cfg, data, c); err != nil {
		return r, err
	}
	st, err := os.Stat(filepath.Join(data, "questbox.db"))
	if err != nil {
		return r, err
	}
	r.storeBytes = st.Size()

	d, ready, err := start(bin, qemu, cfg, data)
	if err != nil {
		return r, err
	}
	defer d.stop()
	r.ready = ready
	r.rss, r.anon, r.file = memory(d.cmd.Process.Pid)

	ctx := context.Background()
	// Two ticks to reach the steady state (every quest deferred, then back).
	for range 2 {
		if _, err := d.client.Tick(ctx); err != nil {
			return r, fmt.Errorf("tick: %w", err)
		}
	}
	w0 := writeBytes(d.cmd.Process.Pid)
	var times []int64
	for range ticks {
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
	r.writePerTick = (writeBytes(d.cmd.Process.Pid) - w0) / int64(ticks)
	slices.Sort(times)
	r.tickMedian = times[len(times)/2]
	r.tickP = times[len(times)*9/10]
	r.rssAfter, _, _ = memory(d.cmd.Process.Pid)
	return r, nil
}

// memory reads VmRSS, RssAnon and RssFile (KiB) of pid.
func memory(pid int) (rss, anon, file int64) {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = v
		case "RssAnon:":
			anon = v
		case "RssFile:":
			file = v
		}
	}
	return
}

// writeBytes is write_bytes of /proc/PID/io: bytes the process caused to
// be sent to the storage layer.
func writeBytes(pid int) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "write_bytes: "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}
