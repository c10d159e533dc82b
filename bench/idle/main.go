// Command idle measures an idle questbox daemon: its resident memory (RSS)
// on a store with many nodes, and the CPU time it uses while nothing is due
// (the idle daemon must not busy-wait).
//
// It builds questbox, seeds a store with -nodes pending nodes of an
// external quest (nothing is ever dispatched), starts `questbox run`, waits
// -for, and reads /proc/PID/status and /proc/PID/stat. Linux only.
//
//	go run ./bench/idle -nodes 100000 -for 60s
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
)

func main() {
	nodes := flag.Int("nodes", 100_000, "pending nodes to seed")
	wait := flag.Duration("for", 60*time.Second, "how long to watch the idle daemon")
	flag.Parse()
	if err := run(*nodes, *wait); err != nil {
		fmt.Fprintln(os.Stderr, "idle:", err)
		os.Exit(1)
	}
}

func run(nodes int, wait time.Duration) error {
	dir, err := os.MkdirTemp("", "qbidle")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	keep := os.Getenv("IDLE_KEEP") != ""
	if keep {
		fmt.Fprintln(os.Stderr, "keeping", dir)
	}
	bin := filepath.Join(dir, "questbox")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./cmd/questbox")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build: %w", err)
	}
	st, _ := os.Stat(bin)
	data := filepath.Join(dir, "data")
	qb := func(args ...string) ([]byte, error) {
		cmd := exec.Command(bin, append(args, "--data", data)...)
		cmd.Stderr = os.Stderr
		return cmd.Output()
	}
	out, err := qb("quest", "new", "idle", "--direction", "measure an idle daemon", "--provider", "external", "--json")
	if err != nil {
		return fmt.Errorf("quest new: %w", err)
	}
	id := jsonField(out, "id")
	// `scan --from` reads at most 1 MiB of hypotheses: seed in files of
	// 20,000 lines (~1 MB).
	seed := filepath.Join(dir, "seed.txt")
	var seedTime time.Duration
	for from := 0; from < nodes; from += 20_000 {
		var lines bytes.Buffer
		for i := from; i < min(from+20_000, nodes); i++ {
			fmt.Fprintf(&lines, "hypothesis number %d for the idle measurement\n", i)
		}
		if err := os.WriteFile(seed, lines.Bytes(), 0o600); err != nil {
			return err
		}
		t0 := time.Now()
		if _, err := qb("scan", id, "--from", seed); err != nil {
			return fmt.Errorf("scan: %w", err)
		}
		seedTime += time.Since(t0)
	}
	dbInfo, _ := os.Stat(filepath.Join(data, "questbox.db"))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	daemon := exec.CommandContext(ctx, bin, "run", "--data", data, "--tick", "60s", "--gpio", "sim", "--listen", "127.0.0.1:0")
	daemon.Stdout, daemon.Stderr = nil, nil
	if err := daemon.Start(); err != nil {
		return err
	}
	sock := filepath.Join(data, "questbox.sock")
	for i := 0; i < 600; i++ {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	pid := daemon.Process.Pid
	cpu0, err := cpuTicks(pid)
	if err != nil {
		return err
	}
	time.Sleep(wait)
	cpu1, err := cpuTicks(pid)
	if err != nil {
		return err
	}
	rss, hwm := status(pid, "VmRSS"), status(pid, "VmHWM")
	anon, file := status(pid, "RssAnon"), status(pid, "RssFile")
	daemon.Process.Signal(os.Interrupt)
	daemon.Wait()
	const hz = 100 // USER_HZ on Linux
	used := time.Duration(cpu1-cpu0) * time.Second / hz
	fmt.Printf("machine: %s/%s, %d CPUs, %s\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpuModel())
	fmt.Printf("binary: %.1f MiB (static, stripped)\n", float64(st.Size())/(1<<20))
	fmt.Printf("store: %d nodes, %.1f MiB, seeded in %s (scans of 20,000)\n", nodes, float64(dbInfo.Size())/(1<<20), seedTime.Round(time.Millisecond))
	fmt.Printf("idle daemon: RSS %s (anonymous %s, file-backed %s: the store's mmap), peak %s\n", rss, anon, file, hwm)
	fmt.Printf("idle CPU: %s over %s (%.3f%%)\n", used, wait, 100*float64(used)/float64(wait))
	return nil
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
