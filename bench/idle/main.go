// Command idle measures an idle questbox daemon: its resident memory (RSS)
// on a store with many nodes, the CPU time it uses while nothing is due
// (the idle daemon must not busy-wait), and what it writes to the disk per
// tick and per day.
//
// It builds questbox, seeds a store with -quests idle quests (external
// quests, each with a pending node waiting for an outside agent: nothing
// is ever dispatched) and -nodes pending nodes in all, starts `questbox
// run --tick T`, lets it run -ticks ticks, and reads /proc/PID/status,
// /proc/PID/stat and /proc/PID/io (write_bytes: what the process had the
// kernel write to the disk; syscw: write system calls). Linux only.
//
// Bytes per day are at the 60 s tick: what the measured ticks wrote, per
// tick, times 1,440, plus the daemon's hourly save of the quests' wall clock
// (docs/design.md, "Loop control"; engine/wallclock.go) times 24, which
// -ticks short of an hour does not see: it is measured by the engine's
// TestIdleDayWrites and given with -hourly (bytes).
//
//	go run ./bench/idle -nodes 100000 -quests 10 -tick 1s -ticks 60
//
// With -busy it measures a busy box instead: bytes written per agent run,
// with the run logs on (busy.go).
//
//	go run ./bench/idle -busy -quests 4 -tick 1s -ticks 30 -stderr 2000
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/questbox/questbox/bench/internal/scratch"
)

func main() {
	nodes := flag.Int("nodes", 100_000, "pending nodes to seed, in all")
	quests := flag.Int("quests", 10, "idle quests (external, each with pending nodes)")
	tick := flag.Duration("tick", time.Second, "the daemon's tick while measured")
	ticks := flag.Int("ticks", 60, "ticks to watch")
	hourly := flag.Int64("hourly", 0, "bytes the hourly wall-clock save writes (from TestIdleDayWrites), for the per-day figure")
	busyRuns := flag.Bool("busy", false, "the busy variant: quests whose command agents keep running, with their logs (see busy.go)")
	stderr := flag.Int("stderr", 2000, "with -busy: bytes of stderr each agent run writes")
	flag.Parse()
	var err error
	if *busyRuns {
		err = runBusy(*quests, *tick, *ticks, *stderr)
	} else {
		err = run(*nodes, *quests, *tick, *ticks, *hourly)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "idle:", err)
		os.Exit(1)
	}
}

// runBusy builds questbox and runs the busy variant in a scratch directory.
func runBusy(quests int, tick time.Duration, ticks, stderr int) error {
	dir, done, err := scratch.Dir("qbbusy", false)
	if err != nil {
		return err
	}
	defer done()
	bin, err := scratch.Daemon(dir)
	if err != nil {
		return err
	}
	return busy(bin, dir, quests, tick, ticks, stderr)
}

func run(nodes, quests int, tick time.Duration, ticks int, hourly int64) error {
	dir, done, err := scratch.Dir("qbidle", os.Getenv("IDLE_KEEP") != "")
	if err != nil {
		return err
	}
	defer done()
	bin, err := scratch.Daemon(dir)
	if err != nil {
		return err
	}
	st, _ := os.Stat(bin)
	data := filepath.Join(dir, "data")
	qb := func(args ...string) ([]byte, error) {
		cmd := exec.Command(bin, append(args, "--data", data)...)
		cmd.Stderr = os.Stderr
		return cmd.Output()
	}
	seed := filepath.Join(dir, "seed.txt")
	t0 := time.Now()
	for q := 0; q < quests; q++ {
		out, err := qb("quest", "new", fmt.Sprint("idle ", q), "--direction", fmt.Sprint("measure an idle daemon ", q), "--provider", "external", "--json")
		if err != nil {
			return fmt.Errorf("quest new: %w", err)
		}
		id := jsonField(out, "id")
		per := nodes / quests
		if q == 0 {
			per += nodes % quests
		}
		var lines bytes.Buffer
		for i := 0; i < per; i++ {
			fmt.Fprintf(&lines, "hypothesis number %d of quest %d for the idle measurement\n", i, q)
		}
		if err := os.WriteFile(seed, lines.Bytes(), 0o600); err != nil {
			return err
		}
		if _, err := qb("scan", id, "--from", seed); err != nil {
			return fmt.Errorf("scan: %w", err)
		}
	}
	seedTime := time.Since(t0)
	dbInfo, _ := os.Stat(filepath.Join(data, "questbox.db"))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := func() (*exec.Cmd, int, error) {
		daemon := exec.CommandContext(ctx, bin, "run", "--data", data, "--tick", tick.String(), "--gpio", "sim", "--listen", "127.0.0.1:0")
		daemon.Stdout, daemon.Stderr = nil, nil
		if err := daemon.Start(); err != nil {
			return nil, 0, err
		}
		sock := filepath.Join(data, "questbox.sock")
		for i := 0; i < 600; i++ {
			if c, err := net.Dial("unix", sock); err == nil {
				c.Close()
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		// Start at a tick boundary plus half a tick, so a window holds
		// exactly the ticks it says.
		now := time.Now()
		time.Sleep(now.Truncate(tick).Add(tick + tick/2).Sub(now))
		return daemon, daemon.Process.Pid, nil
	}
	// settle waits for two ticks in a row that wrote nothing, and says
	// how many ticks that took.
	settle := func(pid int) int {
		settled, quiet := 0, 0
		for last := procIO(pid)["write_bytes"]; quiet < 2 && settled < 600; settled++ {
			time.Sleep(tick)
			w := procIO(pid)["write_bytes"]
			if w == last {
				quiet++
			} else {
				quiet = 0
			}
			last = w
		}
		return settled
	}
	// First run: seeding emitted an event per node, and the first ticks
	// prune the outbox down to its retention window (at most 5,000
	// events a tick), which writes, and reads those events' pages
	// through the store's map. Its RSS is reported as such; the idle box
	// is then measured in a second run, as a box that restarted (or
	// never bulk-seeded) is.
	daemon, pid, err := start()
	if err != nil {
		return err
	}
	settled := settle(pid)
	firstRSS, firstFile := status(pid, "VmRSS"), status(pid, "RssFile")
	daemon.Process.Signal(os.Interrupt)
	daemon.Wait()
	daemon, pid, err = start()
	if err != nil {
		return err
	}
	settle(pid)
	cpu0, err := cpuTicks(pid)
	if err != nil {
		return err
	}
	io0 := procIO(pid)
	wait := time.Duration(ticks) * tick
	time.Sleep(wait)
	cpu1, err := cpuTicks(pid)
	if err != nil {
		return err
	}
	io1 := procIO(pid)
	rss, hwm := status(pid, "VmRSS"), status(pid, "VmHWM")
	anon, file := status(pid, "RssAnon"), status(pid, "RssFile")
	daemon.Process.Signal(os.Interrupt)
	daemon.Wait()
	const hz = 100 // USER_HZ on Linux
	used := time.Duration(cpu1-cpu0) * time.Second / hz
	wrote, calls := io1["write_bytes"]-io0["write_bytes"], io1["syscw"]-io0["syscw"]
	perTick := float64(wrote) / float64(ticks)
	perDay := perTick*1440 + float64(hourly)*24
	fmt.Printf("machine: %s/%s, %d CPUs, %s\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpuModel())
	fmt.Printf("binary: %.1f MiB (static, stripped)\n", float64(st.Size())/(1<<20))
	fmt.Printf("store: %d quests, %d pending nodes, %.1f MiB, seeded in %s\n", quests, nodes, float64(dbInfo.Size())/(1<<20), seedTime.Round(time.Millisecond))
	fmt.Printf("idle daemon (second run): RSS %s (anonymous %s, file-backed %s: the store's mmap and the binary), peak %s\n", rss, anon, file, hwm)
	fmt.Printf("first run: the outbox pruned down to its retention window after %d ticks; RSS then %s (file-backed %s: the pruned events' pages)\n", settled, firstRSS, firstFile)
	fmt.Printf("idle CPU: %s over %d ticks of %s (%.3f%%)\n", used, ticks, tick, 100*float64(used)/float64(wait))
	fmt.Printf("idle writes: %d bytes in %d write calls over %d ticks: %.0f bytes/tick, %.0f bytes/quest/tick\n", wrote, calls, ticks, perTick, perTick/float64(max(quests, 1)))
	fmt.Printf("per day at the 60 s tick: %.0f bytes (%.3f MiB; 1,440 ticks + 24 hourly saves of %d bytes), %.0f bytes per idle quest\n", perDay, perDay/(1<<20), hourly, perDay/float64(max(quests, 1)))
	return nil
}

// procIO reads /proc/PID/io.
func procIO(pid int) map[string]int64 {
	out := map[string]int64{}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return out
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			out[k], _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return out
}

func jsonField(raw []byte, key string) string {
	s := string(raw)
	i := strings.Index(s, `"`+key+`":`)
	if i < 0 {
		return ""
	}
	s = strings.TrimSpace(s[i+len(key)+3:])
	s = strings.TrimPrefix(s, `"`)
	if j := strings.IndexAny(s, `",}`); j >= 0 {
		s = s[:j]
	}
	return s
}

func cpuTicks(pid int) (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+2:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s, nil
}

func status(pid int, key string) string {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), key+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

func cpuModel() string {
	raw, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(l, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
		}
	}
	return "unknown cpu"
}
