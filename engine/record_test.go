package engine

import (
	"context"
	"errors"
	"sync"
	"syscall"
	"testing"

	"github.com/questbox/questbox/engine/agent"
)

// diskFull makes the store refuse writes (as bbolt does on a full SD card)
// while it is set, and reports each refused write on refused.
type diskFull struct {
	mu      sync.Mutex
	full    bool
	refused chan struct{}
}

func (d *diskFull) set(full bool) {
	d.mu.Lock()
	d.full = full
	d.mu.Unlock()
}

func (d *diskFull) fault() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.full {
		return nil
	}
	d.refused <- struct{}{}
	return syscall.ENOSPC
}

// recordRig is a quest whose one run is held until release is closed,
// on a store that can be made full.
func recordRig(t *testing.T) (h *harness, disk *diskFull, release chan struct{}, node string) {
	release = make(chan struct{})
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		<-release
		return reply(answer("dead", "dead end: nothing down this road for "+req.Node)), nil
	})
	h = newHarness(t, Options{Providers: map[string]Provider{"p": p}})
	disk = &diskFull{refused: make(chan struct{}, 16)}
	h.store.h.WriteFault = disk.fault
	h.quest(func(s *QuestSpec) { s.Provider = "p"; s.Mode = ModeSolo })
	rep, err := h.e.Tick(context.Background())
	if err != nil || len(rep.Dispatched) != 1 {
		t.Fatalf("tick: %v, %v", rep, err)
	}
	return h, disk, release, rep.Dispatched[0]
}

// A run whose result cannot be written (full disk) keeps its answer and
// retries; the node stays running meanwhile, the engine reports the
// unrecorded result, and once the disk has room the verdict is recorded
// exactly once without the agent running again.
func TestRunResultRetriedWhileDiskFull(t *testing.T) {
	h, disk, release, id := recordRig(t)
	disk.set(true)
	close(release)
	<-disk.refused // first attempt
	h.clock.BlockUntil(1)
	if n, err := h.e.Unrecorded(); n != 1 || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Unrecorded() = %d, %v, want 1, ENOSPC", n, err)
	}
	if st := h.node(id).Status; st != Running {
		t.Errorf("node is %s while its result waits, want running", st)
	}
	h.clock.Advance(recordRetryFirst) // second attempt, still full
	<-disk.refused
	h.clock.BlockUntil(1)
	disk.set(false)
	h.clock.Advance(2 * recordRetryFirst) // backoff doubled
	h.e.Wait()
	if n, err := h.e.Unrecorded(); n != 0 || err != nil {
		t.Errorf("after recording, Unrecorded() = %d, %v, want 0, nil", n, err)
	}
	n := h.node(id)
	if n.Status != Aborted || len(n.Runs) != 1 {
		t.Errorf("node %s after the disk has room: %s with %d runs, want aborted (dead end) with 1", id, n.Status, len(n.Runs))
	}
}

// Shutdown gives up on a result that cannot be written: the node stays
// running in the store, and the next start puts it back to pending with
// an interrupted attempt and no try used.
func TestUnrecordedResultAfterShutdownIsInterrupted(t *testing.T) {
	h, disk, release, id := recordRig(t)
	disk.set(true)
	close(release)
	<-disk.refused
	h.clock.BlockUntil(1)
	h.e.Shutdown(0) // cancels the retry
	if n, _ := h.e.Unrecorded(); n != 0 {
		t.Errorf("after Shutdown, Unrecorded() = %d, want 0", n)
	}
	disk.set(false)
	h.restart()
	n := h.node(id)
	if n.Status != Pending || n.Tries != 0 {
		t.Fatalf("node after restart: %s with %d tries, want pending with 0", n.Status, n.Tries)
	}
	if last := n.Attempts[len(n.Attempts)-1]; last.Outcome != "interrupted" {
		t.Errorf("last attempt %+v, want interrupted", last)
	}
}
