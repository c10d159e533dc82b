// Command upgrade measures what the upgrade of a big schema-8 store costs the
// daemon of this tree at its start, and what `questbox verify` costs on the
// upgraded store (docs/design.md, "Memory on a small box"): the 8 -> 9
// migration moves every unlocked node's attempt log into the attempts bucket
// (in one transaction up to d8bbc77, in parts of ~4 MiB since), and verify
// walks every node's chain of attempt records.
//
// Seeding needs the schema-8 engine: -v080 is a checkout of questbox
// v0.8.0 (commit b0e2ffb, the last schema-8 release), e.g.
//
//	git worktree add --detach /tmp/v080 b0e2ffb
//
// into which seed8_test.go.in is copied as engine/seed8_test.go and run
// once per size (`go test -run TestSeed8 ./engine` with QB_SEED8_*): NODES
// nodes in quests of 1,000, LOGGED of them pending with ATTEMPTS attempts
// each (a FAIL with a gate fact, feedback and a claim hash), the rest
// aborted. The seeded file is synced and dropped from the page cache.
//
// Then, -rounds times per size, on a fresh copy of it: the daemon starts
// (exec to the first answer of GET /api/quests, which needs the opened,
// checked and migrated store), its VmHWM and write_bytes at ready, the
// file's size before and after; the daemon stops; `questbox verify` on
// the store (wall time, its peak RSS from rusage); a second start on the
// migrated store (the same without the migration).
//
//	go run ./bench/upgrade -v080 /tmp/v080 -sizes 10000:5000:10,100000:50000:10 -rounds 3
//	go run ./bench/upgrade -v080 /tmp/v080 -sizes 10000:5000:10 -bin dist/questbox-linux-arm64 -qemu qemu-aarch64-static
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/questbox/questbox/bench/internal/pagecache"
	"github.com/questbox/questbox/bench/internal/proc"
	"github.com/questbox/questbox/bench/internal/scratch"
	"github.com/questbox/questbox/ui/api"
)

//go:embed seed8_test.go.in
var seedTest []byte

type size struct{ nodes, logged, attempts int }

func main() {
	v080 := flag.String("v080", "", "a checkout of questbox v0.8.0 (b0e2ffb) to seed the schema-8 stores with")
	sizes := flag.String("sizes", "10000:5000:10,100000:50000:10", "NODES:LOGGED:ATTEMPTS triples, comma separated")
	bin := flag.String("bin", "", "the questbox binaries to measure, comma separated, alternating in each round (default: build ./cmd/questbox)")
	qemu := flag.String("qemu", "", "run the daemon and verify under this qemu-user (a relative measure)")
	rounds := flag.Int("rounds", 3, "upgrades measured per size, each on a fresh copy")
	keep := flag.Bool("keep", false, "keep the temporary directory")
	flag.Parse()
	if err := run(*v080, *sizes, *bin, *qemu, *rounds, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "upgrade:", err)
		os.Exit(1)
	}
}

func run(v080, list, bin, qemu string, rounds int, keep bool) error {
	if v080 == "" {
		return errors.New("-v080: a checkout of v0.8.0 is needed to seed schema-8 stores")
	}
	var sizes []size
	for _, p := range strings.Split(list, ",") {
		f := strings.Split(strings.TrimSpace(p), ":")
		var v [3]int
		var err error
		for i := range v {
			if len(f) != 3 {
				break
			}
			if v[i], err = strconv.Atoi(f[i]); err != nil || v[i] < 0 {
				break
			}
		}
		if len(f) != 3 || err != nil || v[1] > v[0] || v[0] < 1 {
			return fmt.Errorf("size %q: want NODES:LOGGED:ATTEMPTS with NODES >= LOGGED", p)
		}
		sizes = append(sizes, size{v[0], v[1], v[2]})
	}
	dir, done, err := scratch.Dir("qbupgrade", keep)
	if err != nil {
		return err
	}
	defer done()
	if bin == "" {
		if bin, err = scratch.Daemon(dir); err != nil {
			return err
		}
	}
	bins := strings.Split(bin, ",")
	for i := range bins {
		if bins[i], err = filepath.Abs(strings.TrimSpace(bins[i])); err != nil {
			return err
		}
	}
	seedFile := filepath.Join(v080, "engine", "seed8_test.go")
	if err := os.WriteFile(seedFile, seedTest, 0o644); err != nil {
		return err
	}
	defer os.Remove(seedFile)
	cfg, err := writeConfig(dir)
	if err != nil {
		return err
	}
	fmt.Printf("questbox %s, daemon %s\n\n", strings.Join(bins, ", "), map[bool]string{true: "native", false: "under " + qemu}[qemu == ""])
	fmt.Println("| binary | UTC | nodes | logged x attempts | file before | start to ready (migrating) | VmHWM at ready (max RssAnon) | written | file after | verify | verify peak RSS (max RssAnon) | start to ready (migrated) | VmHWM |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for i, sz := range sizes {
		seeded := filepath.Join(dir, fmt.Sprint(i), "seeded")
		if err := os.MkdirAll(seeded, 0o755); err != nil {
			return err
		}
		t0 := time.Now()
		seed := exec.Command("go", "test", "-count=1", "-timeout", "60m", "-run", "^TestSeed8$", "./engine")
		seed.Dir = v080
		seed.Env = append(os.Environ(), "QB_SEED8_DIR="+seeded, fmt.Sprintf("QB_SEED8_NODES=%d", sz.nodes),
			fmt.Sprintf("QB_SEED8_LOGGED=%d", sz.logged), fmt.Sprintf("QB_SEED8_ATTEMPTS=%d", sz.attempts))
		if out, err := seed.CombinedOutput(); err != nil {
			return fmt.Errorf("seed %v: %v: %s", sz, err, out)
		}
		fmt.Fprintf(os.Stderr, "upgrade: seeded %d nodes (%d x %d attempts) in %s\n", sz.nodes, sz.logged, sz.attempts, time.Since(t0).Round(time.Second))
		for round := range rounds {
			for j, bin := range bins {
				data := filepath.Join(dir, fmt.Sprint(i), fmt.Sprintf("data-%d-%d", round, j))
				if out, err := exec.Command("cp", "-a", seeded, data).CombinedOutput(); err != nil {
					return fmt.Errorf("copy the seeded store: %v: %s", err, out)
				}
				at := time.Now().UTC().Format("15:04")
				r, err := measure(bin, qemu, cfg, data)
				if err != nil {
					return fmt.Errorf("%d nodes, %s: %w", sz.nodes, bin, err)
				}
				os.RemoveAll(data)
				fmt.Printf("| %s | %s | %d | %d x %d | %.1f MiB | %s | %.1f MiB (%.1f) | %.1f MiB | %.1f MiB | %s | %.1f MiB (%.1f) | %s | %.1f MiB |\n",
					filepath.Base(bin), at, sz.nodes, sz.logged, sz.attempts, mib(r.before), r.ready.Round(time.Millisecond), kib(r.hwm), kib(r.anon), mib(r.written), mib(r.after),
					r.verify.Round(time.Millisecond), kib(r.verifyRSS), kib(r.verifyAnon), r.again.Round(time.Millisecond), kib(r.againHWM))
			}
		}
	}
	return nil
}

type result struct {
	before, after, written   int64
	hwm, verifyRSS, againHWM int64 // KiB
	anon, verifyAnon         int64 // KiB, sampled
	ready, verify, again     time.Duration
}

func measure(bin, qemu, cfg, data string) (result, error) {
	var r result
	db := filepath.Join(data, "questbox.db")
	if err := pagecache.Settle(db); err != nil {
		return r, err
	}
	fi, err := os.Stat(db)
	if err != nil {
		return r, err
	}
	r.before = fi.Size()
	r.ready, r.hwm, r.anon, r.written, err = startStop(bin, qemu, cfg, data)
	if err != nil {
		return r, fmt.Errorf("upgrade: %w", err)
	}
	if fi, err = os.Stat(db); err != nil {
		return r, err
	}
	r.after = fi.Size()
	if err := pagecache.Settle(db); err != nil {
		return r, err
	}
	argv := append(strings.Fields(qemu), bin, "verify", "--data", data)
	v := exec.Command(argv[0], argv[1:]...)
	var out strings.Builder
	v.Stdout, v.Stderr = &out, &out
	t0 := time.Now()
	if err := v.Start(); err != nil {
		return r, err
	}
	peak := proc.StartPeak(v.Process.Pid)
	err = v.Wait()
	r.verify = time.Since(t0)
	r.verifyAnon, _, _ = peak.Stop()
	if err != nil {
		return r, fmt.Errorf("verify: %v: %s", err, out.String())
	}
	r.verifyRSS = int64(v.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) // int32 on 32-bit arm
	if err := pagecache.Settle(db); err != nil {
		return r, err
	}
	r.again, r.againHWM, _, _, err = startStop(bin, qemu, cfg, data)
	if err != nil {
		return r, fmt.Errorf("second start: %w", err)
	}
	return r, nil
}

// startStop starts the daemon on data, waits for it to be ready, reads
// its peak RSS and bytes written so far, and stops it; anon is the
// highest RssAnon sampled from its start to its exit.
func startStop(bin, qemu, cfg, data string) (ready time.Duration, hwm, anon, written int64, err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, 0, 0, err
	}
	listen := l.Addr().String()
	l.Close()
	argv := append(strings.Fields(qemu), bin, "run", "--config", cfg, "--data", data, "--tick", "1000h", "--gpio", "sim", "--listen", listen)
	cmd := exec.Command(argv[0], argv[1:]...)
	logf, err := os.Create(data + ".log")
	if err != nil {
		return 0, 0, 0, 0, err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	sock := filepath.Join(data, "questbox.sock")
	client := api.NewClient(api.SocketClient(sock), sock)
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, 0, 0, err
	}
	peak := proc.StartPeak(cmd.Process.Pid)
	defer func() {
		if a, _, _ := peak.Stop(); err == nil {
			anon = a
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() error {
		cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			return err
		case <-time.After(5 * time.Minute):
			cmd.Process.Kill()
			return errors.New("the daemon did not stop within 5 minutes")
		}
	}
	for {
		select {
		case err := <-exited:
			return 0, 0, 0, 0, fmt.Errorf("the daemon exited: %v (see %s)", err, logf.Name())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := client.Quests(ctx)
		cancel()
		if err == nil {
			break
		}
		if strings.Contains(err.Error(), "waiting for its store") {
			stop()
			return 0, 0, 0, 0, fmt.Errorf("the daemon refused the store: %v (see %s)", err, logf.Name())
		}
		if time.Since(t0) > 30*time.Minute {
			stop()
			return 0, 0, 0, 0, fmt.Errorf("not ready after 30 minutes: %v", err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	ready = time.Since(t0)
	pid := cmd.Process.Pid
	hwm = proc.Numbers(pid, "status")["VmHWM:"]
	written = proc.Numbers(pid, "io")["write_bytes:"]
	return ready, hwm, 0, written, stop()
}

func writeConfig(dir string) (string, error) {
	conf := `[dashboard]
read = "public"
[defaults]
mode = "solo"
[network]
probe = ""
`
	cfg := filepath.Join(dir, "questbox.toml")
	return cfg, os.WriteFile(cfg, []byte(conf), 0o644)
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
func kib(k int64) float64 { return float64(k) / 1024 }
