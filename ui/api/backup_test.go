package api

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"testing"
)

// TestBackupOnlyOnInternalDoors pins that the whole store crosses only
// the control socket and the in-process door: the network door (the
// dashboard's) answers forbidden to backup and restore; an internal door
// streams a copy whose length it announced.
func TestBackupOnlyOnInternalDoors(t *testing.T) {
	e := newEngines(t)
	ctx := context.Background()

	hc, stop := InProcess(New(Options{Engines: e}))
	defer stop()
	c := NewClient(hc, "network")
	var b bytes.Buffer
	_, err := c.Backup(ctx, &b)
	if ae, ok := errors.AsType[*Error](err); !ok || ae.Code != CodeForbidden || HTTPStatus(ae.Code) != http.StatusForbidden {
		t.Errorf("backup on the network door: %v, want forbidden", err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://questbox/api/restore", bytes.NewReader([]byte("x")))
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("restore on the network door: %s, want 403", resp.Status)
	}

	ihc, istop := InProcess(New(Options{Engines: e, Internal: true}))
	defer istop()
	n, err := NewClient(ihc, "internal").Backup(ctx, &b)
	if err != nil || n == 0 || int(n) != b.Len() || !bytes.Equal(b.Bytes()[16:20], []byte{0xed, 0xda, 0x0c, 0xed}) {
		t.Errorf("backup on the control socket's door: %d bytes, %v", n, err)
	}
}
