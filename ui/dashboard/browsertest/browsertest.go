// Package browsertest drives Debian's headless Chromium for the dashboard's
// browser tests, through chromedp. Only tests import it, so the daemon's
// binary carries no browser driver.
//
// Chromium is found at $QUESTBOX_CHROMIUM or /usr/bin/chromium (`make
// test` installs Debian's chromium package when it is missing). Without
// it a browser test is skipped, except under CI=true, where it fails: a
// green CI must have run the browser tests.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// DefaultPath is Debian's chromium.
const DefaultPath = "/usr/bin/chromium"

// Path is the Chromium to drive, or "" when there is none.
func Path() string {
	p := os.Getenv("QUESTBOX_CHROMIUM")
	if p == "" {
		p = DefaultPath
	}
	if _, err := exec.LookPath(p); err != nil {
		return ""
	}
	return p
}

// New starts a headless Chromium with a fresh profile, stopped when t
// ends, and returns a tab's context. Every action on the tab should take
// a context with a deadline, such as one from Timeout.
func New(t testing.TB) context.Context {
	t.Helper()
	path := Path()
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no Chromium at %s: `make test` installs Debian's chromium (scripts/deps.sh); CI must run the browser tests", DefaultPath)
		}
		t.Skipf("no Chromium at %s (apt-get install chromium, or make test)", DefaultPath)
	}
	// The flags of this machine's notes: no sandbox (root), no GPU, and no
	// traffic of Chromium's own: only the test's loopback server is reached.
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("no-first-run", true),
		chromedp.WindowSize(412, 915), // a phone
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// Start the browser now, so that its start-up is not charged to the
	// first step of the test.
	// The browser lives as long as the context of its first action: this
	// one, not a step's shorter one.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	return ctx
}

// Timeout is ctx with a generous deadline: a step that hangs fails the
// test with a message instead of running into go test's own timeout. It
// synchronises nothing (chromedp's waits do that) and asserts nothing
// about how fast anything is.
func Timeout(t testing.TB, ctx context.Context) context.Context {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// ArtifactDir is where screenshots go: $QUESTBOX_ARTIFACTS/<test name> when
// set (`make test` sets it to ./artifacts), else the test's artifact
// directory (kept with go test -artifacts).
func ArtifactDir(t *testing.T) string {
	t.Helper()
	root := os.Getenv("QUESTBOX_ARTIFACTS")
	if root == "" {
		return t.ArtifactDir()
	}
	dir := filepath.Join(root, regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(t.Name(), "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Screenshot saves the whole page as name.png in ArtifactDir and returns
// its path.
func Screenshot(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(Timeout(t, ctx), chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(ArtifactDir(t), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	return path
}

// ScreenshotView saves what the window shows (not the whole page) as
// name.png in ArtifactDir and returns its path.
func ScreenshotView(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(Timeout(t, ctx), chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(ArtifactDir(t), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	return path
}

// ScreenshotOf saves the first element sel matches as name.png in
// ArtifactDir (at the page's viewport: a phone) and returns its path.
func ScreenshotOf(t *testing.T, ctx context.Context, sel, name string) string {
	t.Helper()
	png, err := chromedp.Run(Timeout(t, ctx), chromedp.Screenshot(sel))
	if err != nil {
		t.Fatalf("screenshot %s of %s: %v", name, sel, err)
	}
	path := filepath.Join(ArtifactDir(t), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	return path
}

// WaitFor waits until the JavaScript expression js is truthy in the page
// (checked on every DOM change and animation frame: no sleeping), or fails
// the test after a generous bound, saying what it waited for.
func WaitFor(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	if _, err := chromedp.Run(Timeout(t, ctx), chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(90*time.Second))); err != nil {
		t.Errorf("waiting for %s (%s): %v", what, js, err)
		Screenshot(t, ctx, "failed-waiting")
		t.FailNow()
	}
}

// Eval evaluates js in the page and returns its value.
func Eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(Timeout(t, ctx), chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// Text returns the textContent of the elements sel matches, in order.
func Text(t *testing.T, ctx context.Context, sel string) []string {
	t.Helper()
	js := fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).map(e => e.textContent)`, sel)
	out, err := chromedp.Run(Timeout(t, ctx), chromedp.Evaluate[[]string](js))
	if err != nil {
		t.Fatalf("read %s: %v", sel, err)
	}
	return out
}
