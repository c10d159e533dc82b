package dashboard

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"net/http"
	"path"
	"strings"
)

// The page: plain HTML, CSS and JavaScript, no framework, no CDN, no fonts
// (the system's own), so it loads from the box with no internet.
//
//go:embed assets/index.html assets/app.css assets/app.js assets/runs.js
var assetFS embed.FS

// assetTypes is the Content-Type of each kind of file the page is made of.
// A fixed table, not mime.TypeByExtension: that one loads the system's MIME
// database (/usr/share/mime/globs2, ~0.7 MB of live heap the daemon would
// keep for its whole life) to name
// three types, and names them as whatever that system's files say.
var assetTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
}

// asset is one embedded file, gzipped once at start-up.
type asset struct {
	body, gz []byte
	ctype    string
	etag     string
}

func loadAssets() (map[string]*asset, error) {
	out := map[string]*asset{}
	for _, name := range []string{"index.html", "app.css", "app.js", "runs.js"} {
		body, err := assetFS.ReadFile("assets/" + name)
		if err != nil {
			return nil, fmt.Errorf("BUG: dashboard asset %s: %w", name, err)
		}
		ctype, ok := assetTypes[path.Ext(name)]
		if !ok {
			return nil, fmt.Errorf("BUG: dashboard asset %s: no Content-Type for %q", name, path.Ext(name))
		}
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
		zw.Write(body)
		zw.Close()
		sum := sha256.Sum256(body)
		out[name] = &asset{body: body, gz: gz.Bytes(), ctype: ctype,
			etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	}
	return out, nil
}

// PageWeight is the size of the page's files as sent: plain and gzipped.
func (s *Server) PageWeight() (plain, gzipped int) {
	for _, a := range s.assets {
		plain += len(a.body)
		gzipped += len(a.gz)
	}
	return plain, gzipped
}

// asset serves an embedded file: gzipped when the browser takes it, and
// revalidated by its ETag (a new questbox brings a new page at once).
func (s *Server) asset(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a := s.assets[name]
		h := w.Header()
		h.Set("Content-Type", a.ctype)
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", a.etag)
		h.Set("Vary", "Accept-Encoding")
		if r.Header.Get("If-None-Match") == a.etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		body := a.body
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			h.Set("Content-Encoding", "gzip")
			body = a.gz
		}
		h.Set("Content-Length", fmt.Sprint(len(body)))
		w.Write(body)
	}
}
