package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// busy is the idle harness's busy variant (-busy): what a box whose agents
// keep running writes per run, with the run logs on (docs/design.md, "Runs
// and their logs"). It starts `questbox run` on -quests quests of a command
// provider whose agent writes -stderr bytes to its stderr and answers a dead
// end; each tick dispatches one run per quest, up to daemon.max_parallel at a
// time. It watches -ticks ticks and reads the daemon's /proc/PID/io, counts
// the runs dispatched meanwhile (the quests' used agent runs) and the bytes
// the log files grew by, and prints bytes per run: in all (store, log file,
// its fsync), and of the log files alone.
func busy(bin, dir string, quests int, tick time.Duration, ticks int, stderrBytes int) error {
	data := filepath.Join(dir, "data")
	dead := `{"verdict": "dead", "evidence": "measured: the agent ran and found a dead end.", "citations": [], "new_directions": []}`
	// Every run's answer differs a little (its prompt's attempt and node),
	// so that no quest stops for a stall: the agent echoes a line of the
	// prompt into its evidence.
	script := fmt.Sprintf(`in=$(cat); head -c %d /dev/zero | tr '\0' 'e' >&2; echo >&2; node=$(printf '%%s' "$in" | sed -n 's/^Node \(n[0-9]*\).*/\1/p'); printf '%%s' '%s' | sed "s/a dead end/a dead end at $node/"`, stderrBytes, dead)
	argv, _ := json.Marshal([]string{"sh", "-c", script})
	cfg := filepath.Join(dir, "busy.toml")
	text := fmt.Sprintf("[network]\nprobe = \"\"\n[daemon]\nmax_parallel = 2\n[defaults]\nmode = \"solo\"\nmax_agent_runs = 100000\nmax_stalled = 100000\n[providers.busy]\ntype = \"command\"\nargv = %s\n", argv)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		return err
	}
	qb := func(args ...string) ([]byte, error) {
		cmd := exec.Command(bin, append(args, "--config", cfg, "--data", data)...)
		cmd.Stderr = os.Stderr
		return cmd.Output()
	}
	for q := 0; q < quests; q++ {
		out, err := qb("quest", "new", fmt.Sprint("busy ", q), "--direction", fmt.Sprint("keep the agents busy ", q), "--provider", "busy", "--json")
		if err != nil {
			return fmt.Errorf("quest new: %w", err)
		}
		var lines bytes.Buffer
		for i := 0; i < 4*ticks; i++ {
			fmt.Fprintf(&lines, "busy hypothesis %d of quest %d\n", i, q)
		}
		seed := filepath.Join(dir, "seed.txt")
		os.WriteFile(seed, lines.Bytes(), 0o600)
		if _, err := qb("scan", jsonField(out, "id"), "--from", seed); err != nil {
			return fmt.Errorf("scan: %w", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	daemon := exec.CommandContext(ctx, bin, "run", "--config", cfg, "--data", data, "--tick", tick.String(), "--gpio", "sim", "--listen", "127.0.0.1:0")
	if err := daemon.Start(); err != nil {
		return err
	}
	for i := 0; i < 600; i++ {
		if c, err := net.Dial("unix", filepath.Join(data, "questbox.sock")); err == nil {
			c.Close()
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// ended counts the agent runs the quests have used (`quest list`,
	// which every version has, so the harness also measures a questbox
	// from before the logs) and the bytes in the logs directory.
	ended := func() (runs int, logBytes int64) {
		out, err := qb("quest", "list", "--json")
		if err != nil {
			return 0, 0
		}
		var qs []struct {
			Used struct {
				AgentRuns int `json:"agent_runs"`
			} `json:"used"`
		}
		json.Unmarshal(out, &qs)
		for _, q := range qs {
			runs += q.Used.AgentRuns
		}
		ents, _ := os.ReadDir(filepath.Join(data, "logs"))
		for _, e := range ents {
			if info, err := e.Info(); err == nil {
				logBytes += info.Size()
			}
		}
		return runs, logBytes
	}
	// Warm up for a few ticks (the first writes create the logs
	// directory and grow the store), then measure.
	time.Sleep(3 * tick)
	pid := daemon.Process.Pid
	io0 := procIO(pid)
	runs0, logs0 := ended()
	time.Sleep(time.Duration(ticks) * tick)
	io1 := procIO(pid)
	runs1, logs1 := ended()
	daemon.Process.Signal(os.Interrupt)
	daemon.Wait()
	runs, wrote, calls := runs1-runs0, io1["write_bytes"]-io0["write_bytes"], io1["syscw"]-io0["syscw"]
	if runs <= 0 {
		return fmt.Errorf("no run ended in %d ticks", ticks)
	}
	fmt.Printf("busy daemon: %d quests, agents writing %d bytes of stderr each, %d ticks of %s\n", quests, stderrBytes, ticks, tick)
	fmt.Printf("runs: %d; the daemon wrote %d bytes (/proc/PID/io write_bytes) in %d write calls\n", runs, wrote, calls)
	fmt.Printf("per run: %.0f bytes written in all (store, log file and its fsync), %.0f bytes of log file\n", float64(wrote)/float64(runs), float64(logs1-logs0)/float64(runs))
	return nil
}
