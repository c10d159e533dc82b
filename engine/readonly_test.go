package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/storetest"
	"github.com/questbox/questbox/gates/judge"
)

// readOnlyFixture is a store with a locked node, a node awaiting consent,
// a node a crash left running and a pending node.
type readOnlyFixture struct {
	dir                                     string
	quest, locked, review, running, pending string
	claim                                   string
}

func buildReadOnlyFixture(t *testing.T) readOnlyFixture {
	t.Helper()
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) {
		s.Provider = ProviderExternal
		s.Mode = ModeSolo
		s.Checkpoints = []string{RoleScout}
	})
	res, err := h.e.Scan(q.ID, []string{"one", "two", "three", "four"})
	if err != nil {
		t.Fatal(err)
	}
	f := readOnlyFixture{dir: h.dir, quest: q.ID, locked: res.Added[0], review: res.Added[1], running: res.Added[2], pending: res.Added[3]}
	if _, err := h.e.AbortNode(f.locked, "test"); err != nil {
		t.Fatal(err)
	}
	r, err := h.e.Submit(context.Background(), q.ID, f.review, []byte(answer("promising", "worth a human look here", "next")))
	if err != nil || r.Status != AwaitingConsent {
		t.Fatalf("submit: %+v, %v", r, err)
	}
	f.claim = r.ClaimHash
	// A run the daemon never finished: the node stays running in the store.
	err = h.e.update(func(t *txn) error {
		q, err := t.Quest(f.quest)
		if err != nil {
			return err
		}
		n, err := t.Node(f.running)
		if err != nil {
			return err
		}
		_, err = t.newRun(q, n, "p")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.e.AckEvents("mqtt", 2); err != nil {
		t.Fatal(err)
	}
	h.close()
	return f
}

// Reads write nothing: a read-only store and engine answer every read,
// refuse every write with ErrReadOnly before changing anything, and leave
// the file's bytes and modification time as they were.
func TestReadOnlyWritesNothing(t *testing.T) {
	f := buildReadOnlyFixture(t)
	path := filepath.Join(f.dir, StoreFile)
	before, _ := os.ReadFile(path)
	fi0, _ := os.Stat(path)

	s, err := OpenStore(f.dir, StoreOptions{ReadOnly: true, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	// Readers share the lock; a writer waits for them.
	s2, err := OpenStore(f.dir, StoreOptions{ReadOnly: true})
	if err != nil {
		t.Fatalf("a second read-only open: %v", err)
	}
	s2.Close()
	if _, err := OpenStore(f.dir, StoreOptions{LockTimeout: 50e6}); !errors.Is(err, ErrInUse) {
		t.Errorf("a writer while a reader holds the store: %v, want ErrInUse", err)
	}
	e, err := New(s, Options{Clock: newFakeClock()})
	if err != nil {
		t.Fatal(err)
	}

	// Every read.
	reads := map[string]func() error{
		"Quest":     func() error { _, err := e.Quest(f.quest); return err },
		"Quests":    func() error { _, err := e.Quests(); return err },
		"Node":      func() error { _, err := e.Node(f.locked); return err },
		"Nodes":     func() error { _, err := e.Nodes(f.quest); return err },
		"Edges":     func() error { _, err := e.Edges(f.quest); return err },
		"QuestRuns": func() error { _, err := e.QuestRuns("", f.running); return err },
		"Events":    func() error { _, err := e.Events(0, 0); return err },
		"LastSeq":   func() error { e.LastSeq(); return nil },
		"Cursor":    func() error { e.Cursor("mqtt"); return nil },
		"Consents":  func() error { _, err := e.Consents(); return err },
		"Next":      func() error { _, err := e.Next(f.quest); return err },
		"Verify":    func() error { _, err := e.Verify(); return err },
		"Check":     func() error { return s.Check() },
		"JudgeGet":  func() error { _, _, err := s.JudgeCache().Get("k"); return err },
		"Subscribe": func() error { e.Subscribe(0).Close(); return nil },
	}
	for name, read := range reads {
		if err := read(); err != nil {
			t.Errorf("%s on a read-only engine: %v", name, err)
		}
	}
	if n, _ := e.Node(f.running); n.Status != Running {
		t.Errorf("a read-only engine recovered node %s (now %s): recovery is a write", n.ID, n.Status)
	}

	// Every write.
	out := filepath.Join(t.TempDir(), "export.jsonl")
	writes := map[string]func() error{
		"NewQuest": func() error { _, err := e.NewQuest(e.NewQuestSpec("x", "y")); return err },
		"Scan":     func() error { _, err := e.Scan(f.quest, []string{"five"}); return err },
		"Submit": func() error {
			_, err := e.Submit(context.Background(), f.quest, f.pending, []byte(answer("dead", "dead end found here ok")))
			return err
		},
		"Tick":              func() error { _, err := e.Tick(context.Background()); return err },
		"AbortNode":         func() error { _, err := e.AbortNode(f.pending, "x"); return err },
		"StopQuest":         func() error { _, err := e.StopQuest(f.quest, SourceCLI); return err },
		"ResumeQuest":       func() error { _, err := e.ResumeQuest(f.quest, SourceCLI); return err },
		"Approve":           func() error { return e.Approve(f.review, button(t, f.claim)) },
		"Reject":            func() error { return e.Reject(f.review, button(t, f.claim)) },
		"ExpireConsents":    func() error { _, err := e.ExpireConsents(); return err },
		"RecordDeviceEvent": func() error { return e.RecordDeviceEvent(DeviceEvent{What: DevicePress, Result: "x"}) },
		"AckEvents":         func() error { return e.AckEvents("mqtt", 3) },
		"ExportBegin":       func() error { _, err := e.ExportBegin(f.quest, out, 0); return err },
		"ExportAck":         func() error { return e.ExportAck(f.quest, 0, 1) },
		"ExportAbort":       func() error { return e.ExportAbort(f.quest, out) },
		"JudgePut":          func() error { return s.JudgeCache().Put("k", judge.Result{Decided: true}) },
	}
	for name, write := range writes {
		if err := write(); !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s on a read-only engine: %v, want ErrReadOnly", name, err)
		}
	}
	e.Shutdown(0)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	after, _ := os.ReadFile(path)
	fi1, _ := os.Stat(path)
	if !bytes.Equal(before, after) || !fi0.ModTime().Equal(fi1.ModTime()) {
		t.Errorf("the store changed under read-only use (bytes equal: %v, mtime %v -> %v)", bytes.Equal(before, after), fi0.ModTime(), fi1.ModTime())
	}

	// The next writing open recovers the node left running.
	ws, err := OpenStore(f.dir, StoreOptions{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	we, err := New(ws, Options{Clock: newFakeClock()})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := we.Node(f.running); n.Status != Pending {
		t.Errorf("after a writing open, node %s is %s, want pending", n.ID, n.Status)
	}
}

// Options.ReadOnly on a writable store: no recovery, no write.
func TestReadOnlyEngineOnAWritableStore(t *testing.T) {
	f := buildReadOnlyFixture(t)
	s := mustOpenStore(t, f.dir)
	defer s.Close()
	before := s.Commits()
	e, err := New(s, Options{ReadOnly: true, Providers: map[string]Provider{"p": funcProvider(func(context.Context, agent.Request) (agent.Reply, error) {
		return agent.Reply{}, nil
	})}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Scan(f.quest, []string{"six"}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Scan: %v, want ErrReadOnly", err)
	}
	if n, _ := e.Node(f.running); n.Status != Running || s.Commits() != before {
		t.Errorf("read-only engine: node %s, %d commits; want running, none", n.Status, s.Commits()-before)
	}
}

// Without a node left running, opening an engine commits nothing.
func TestNewCommitsOnlyToRecover(t *testing.T) {
	h := newHarness(t, Options{})
	h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal })
	h.close()
	s := mustOpenStore(t, h.dir)
	defer s.Close()
	if _, err := New(s, Options{}); err != nil {
		t.Fatal(err)
	}
	if s.Commits() != 0 {
		t.Errorf("New committed %d times with nothing to recover, want 0", s.Commits())
	}
}

// A read-only open neither creates a store nor upgrades one.
func TestReadOnlyOpenOfMissingStore(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenStore(dir, StoreOptions{ReadOnly: true}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("read-only open of no store: %v, want ErrNotExist", err)
	}
	if _, err := os.Stat(filepath.Join(dir, StoreFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a read-only open created the store: %v", err)
	}
}

// One damaged meta page, read-only: the store is read from the good one,
// nothing is rewritten, and verify says what it found.
func TestReadOnlyWithADamagedMetaPage(t *testing.T) {
	f := buildReadOnlyFixture(t)
	var damaged int
	damageFile(t, f.dir, func(sf *storetest.File) error {
		damaged = 1 - sf.MetaPage
		return sf.GarbageMeta(damaged)
	})
	path := filepath.Join(f.dir, StoreFile)
	before, _ := os.ReadFile(path)
	s, err := OpenStore(f.dir, StoreOptions{ReadOnly: true, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Verify()
	s.Close()
	notes := strings.Join(rep.Notes, "\n")
	if err != nil || !strings.Contains(notes, fmt.Sprintf("meta page %d is damaged", damaged)) || strings.Count(notes, "is damaged") != 1 {
		t.Errorf("verify: %v, notes %q; want ok, naming the damaged meta page once", err, rep.Notes)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("a read-only open rewrote the damaged meta page")
	}
}
