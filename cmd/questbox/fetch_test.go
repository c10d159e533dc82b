package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// TestFetchBounds: a download larger than the bound is refused, a 404 is
// "not there" (an unsigned release when it is the signature), and a file
// is read like a URL.
func TestFetchBounds(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			w.Write([]byte(strings.Repeat("x", 2048)))
		case "/small":
			w.Write([]byte("small"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	if _, err := fetch(ctx, srv.URL+"/big", 1024); err == nil || !strings.Contains(err.Error(), "larger than 1024 bytes") {
		t.Errorf("big: %v", err)
	}
	if b, err := fetch(ctx, srv.URL+"/small", 1024); err != nil || string(b) != "small" {
		t.Errorf("small: %q, %v", b, err)
	}
	if _, err := fetch(ctx, srv.URL+"/missing", 1024); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v, want os.ErrNotExist", err)
	}
	if _, err := fetch(ctx, "/no/such/file", 1024); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want os.ErrNotExist", err)
	}
}
