// Command dashboard measures the dashboard of a real questbox daemon:
// the page's weight as sent (gzipped), the time to its first render in
// headless Chromium, the latency from a committed change to the DOM
// showing it, and the memory each connected websocket client costs.
// (Whether 100 clients slow the tick is BenchmarkTickWithClients in
// ui/dashboard.)
//
// It builds questbox, seeds an external quest with -nodes pending nodes,
// starts `questbox run` on a free loopback port, and drives Debian's
// Chromium (/usr/bin/chromium) through chromedp. Linux only.
//
//	go run ./bench/dashboard -nodes 200 -changes 200 -loads 10 -clients 100
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/gorilla/websocket"

	"github.com/questbox/questbox/bench/internal/scratch"
)

func main() {
	nodes := flag.Int("nodes", 200, "pending nodes of the quest on the page")
	changes := flag.Int("changes", 200, "changes timed from commit to DOM (at most -nodes)")
	loads := flag.Int("loads", 10, "page loads timed to the first render")
	clients := flag.Int("clients", 100, "websocket clients for the memory measurement")
	flag.Parse()
	if err := run(*nodes, min(*changes, *nodes), *loads, *clients); err != nil {
		fmt.Fprintln(os.Stderr, "dashboard:", err)
		os.Exit(1)
	}
}

type daemon struct {
	url, password string
	pid           int
	hc            *http.Client
	csrf          string
}

func run(nodes, changes, loads, clients int) error {
	chromium := "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		return fmt.Errorf("needs Debian's chromium at %s (apt-get install chromium; make test installs it)", chromium)
	}
	dir, done, err := scratch.Dir("qbdash", false)
	if err != nil {
		return err
	}
	defer done()
	bin, err := scratch.Daemon(dir)
	if err != nil {
		return err
	}
	data, conf := filepath.Join(dir, "data"), filepath.Join(dir, "questbox.toml")
	if err := os.WriteFile(conf, []byte("[network]\nprobe = \"\"\n"), 0o600); err != nil {
		return err
	}
	qb := func(args ...string) ([]byte, error) {
		cmd := exec.Command(bin, append(args, "--data", data, "--config", conf)...)
		cmd.Stderr = os.Stderr
		return cmd.Output()
	}
	if _, err := qb("quest", "new", "bench", "--direction", "measure the dashboard", "--provider", "external"); err != nil {
		return fmt.Errorf("quest new: %w", err)
	}
	var hyps bytes.Buffer
	for i := range nodes {
		fmt.Fprintf(&hyps, "hypothesis number %d on the dashboard\n", i)
	}
	seed := filepath.Join(dir, "seed.txt")
	os.WriteFile(seed, hyps.Bytes(), 0o600)
	if _, err := qb("scan", "q1", "--from", seed); err != nil {
		return fmt.Errorf("scan: %w", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "run", "--data", data, "--config", conf, "--listen", addr, "--tick", "1h", "--gpio", "sim")
	stderr, _ := cmd.StderrPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	pwc := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`password=(\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				pwc <- m[1]
			}
		}
	}()
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "dashboard: ") {
				close(listening)
			}
		}
	}()
	d := &daemon{url: "http://" + addr + "/", pid: cmd.Process.Pid}
	select {
	case d.password = <-pwc:
	case <-time.After(time.Minute):
		return fmt.Errorf("the daemon printed no password")
	}
	select {
	case <-listening:
	case <-time.After(time.Minute):
		return fmt.Errorf("the daemon printed no dashboard URL")
	}
	if err := d.login(); err != nil {
		return err
	}

	plain, gz, err := d.pageWeight()
	if err != nil {
		return err
	}
	first, warm, err := d.firstRender(loads, changes, nodes)
	if err != nil {
		return err
	}
	perClient, heapPerClient, err := d.clientMemory(clients)
	if err != nil {
		return err
	}
	out := fmt.Sprintf(`| what | result |
|---|---|
| page weight (index.html, app.css, app.js) | %s gzipped (%s plain) |
| first render, first load in a fresh profile (%d-node quest) | %s |
| first render, reloads (median of %d; min, max) | %s (%s, %s) |
| commit → DOM, request sent to node shown aborted (%d changes): p50 / p99 / max | %s / %s / %s |
| of which the request and its commit (response received): p50 / p99 | %s / %s |
| memory per connected websocket client (%d clients): RSS / Go heap in use | %s / %s |
`, kb(gz), kb(plain), nodes, ms(first), len(warm), ms(median(warm)), ms(slices.Min(warm)), ms(slices.Max(warm)),
		changes, ms(pct(lat, 50)), ms(pct(lat, 99)), ms(slices.Max(lat)), ms(pct(commit, 50)), ms(pct(commit, 99)), clients, kb(perClient), kb(heapPerClient))
	fmt.Printf("machine: %d CPUs, %s/%s, %s\n\n%s", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(), out)
	return nil
}

// Set by firstRender, in ms: request sent → DOM shows the change, and
// request sent → response received (the commit with its fsync).
var lat, commit []float64

func (d *daemon) login() error {
	jar, _ := cookiejar.New(nil)
	d.hc = &http.Client{Jar: jar, Transport: &http.Transport{DisableCompression: true}}
	body, _ := json.Marshal(map[string]string{"password": d.password})
	resp, err := d.hc.Post(d.url+"login", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var s struct{ CSRF string }
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil || resp.StatusCode != 200 {
		return fmt.Errorf("login: %d %v", resp.StatusCode, err)
	}
	d.csrf = s.CSRF
	return nil
}

func (d *daemon) pageWeight() (plain, gz int, err error) {
	for _, p := range []string{"", "app.css", "app.js"} {
		for _, enc := range []string{"identity", "gzip"} {
			req, _ := http.NewRequest("GET", d.url+p, nil)
			req.Header.Set("Accept-Encoding", enc)
			resp, err := d.hc.Do(req)
			if err != nil {
				return 0, 0, err
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if enc == "gzip" {
				gz += len(b)
			} else {
				plain += len(b)
			}
		}
	}
	return plain, gz, nil
}

// firstRender logs in through the page, times loads, then times changes
// from the request that commits them to the DOM showing them.
func (d *daemon) firstRender(loads, changes, nodes int) (first float64, warm []float64, err error) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath("/usr/bin/chromium"), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true), chromedp.WindowSize(412, 915))
	profile, _ := os.MkdirTemp("", "qbchrome")
	defer os.RemoveAll(profile)
	opts = append(opts, chromedp.UserDataDir(profile))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil {
		return 0, nil, err
	}
	var cancels []context.CancelFunc
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	step := func() context.Context {
		c, cancel := context.WithTimeout(ctx, 2*time.Minute)
		cancels = append(cancels, cancel)
		return c
	}
	ready := chromedp.Poll[chromedp.Void](`document.body.dataset.ready === 'true' && document.querySelectorAll('[data-node]').length > 0`, chromedp.WithPollingTimeout(time.Minute))
	mark := chromedp.Evaluate[float64](`performance.getEntriesByName('qb-first-render')[0].startTime`)
	if err := chromedp.Do(step(), chromedp.Navigate(d.url),
		chromedp.Poll[chromedp.Void](`!document.getElementById('login').hidden`),
		chromedp.SendKeys("#password", d.password), chromedp.Click(`#login-form button[type=submit]`), ready); err != nil {
		return 0, nil, fmt.Errorf("log in through the page: %w", err)
	}
	if first, err = chromedp.Run(step(), mark); err != nil {
		return 0, nil, err
	}
	for range loads {
		if err := chromedp.Do(step(), chromedp.Navigate(d.url), ready); err != nil {
			return 0, nil, err
		}
		v, err := chromedp.Run(step(), mark)
		if err != nil {
			return 0, nil, err
		}
		warm = append(warm, v)
	}
	// The page stamps the moment the DOM first shows the awaited node
	// aborted; the stamp and this process's clock are the same wall clock.
	if err := chromedp.Do(step(), chromedp.Evaluate[chromedp.Void](`window.lat = {}; window.want = '';
		new MutationObserver(() => {
			const id = window.want, el = id && document.querySelector('[data-node="' + id + '"]');
			if (el && el.dataset.status === 'aborted' && !(id in window.lat)) window.lat[id] = performance.timeOrigin + performance.now();
		}).observe(document.body, {subtree: true, childList: true, attributes: true, attributeFilter: ['data-status']})`)); err != nil {
		return 0, nil, err
	}
	for i := 1; i <= changes; i++ {
		id := "n" + strconv.Itoa(i)
		if err := chromedp.Do(step(), chromedp.Evaluate[chromedp.Void](`window.want = '`+id+`'`)); err != nil {
			return 0, nil, err
		}
		t0 := float64(time.Now().UnixNano()) / 1e6
		req, _ := http.NewRequest("POST", d.url+"api/nodes/"+id+"/abort", strings.NewReader(`{"reason":"bench"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-CSRF-Token", d.csrf)
		resp, err := d.hc.Do(req)
		if err != nil {
			return 0, nil, err
		}
		resp.Body.Close()
		commit = append(commit, float64(time.Now().UnixNano())/1e6-t0)
		if resp.StatusCode != 200 {
			return 0, nil, fmt.Errorf("abort %s: %d", id, resp.StatusCode)
		}
		t1, err := chromedp.Run(step(), chromedp.Poll[float64](`window.lat['`+id+`']`, chromedp.WithPollingTimeout(time.Minute)))
		if err != nil {
			return 0, nil, fmt.Errorf("waiting for %s on the page: %w", id, err)
		}
		lat = append(lat, t1-t0)
	}
	return first, warm, nil
}

// clientMemory connects n websocket clients and reports what each adds to
// the daemon's resident memory and Go heap.
func (d *daemon) clientMemory(n int) (rss, heap float64, err error) {
	sample := func() (float64, float64) {
		var r, h []float64
		for range 5 {
			time.Sleep(300 * time.Millisecond) // let the daemon settle; a measurement, not a test
			r = append(r, float64(d.rss()))
			h = append(h, d.metric("go_memstats_heap_inuse_bytes"))
		}
		return median(r), median(h)
	}
	r0, h0 := sample()
	u := strings.Replace(d.url, "http://", "ws://", 1) + "ws"
	var conns []*websocket.Conn
	var wg sync.WaitGroup
	for range n {
		c, _, err := (&websocket.Dialer{Jar: d.hc.Jar}).Dial(u, nil)
		if err != nil {
			return 0, 0, err
		}
		if _, _, err := c.ReadMessage(); err != nil {
			return 0, 0, err
		}
		conns = append(conns, c)
		wg.Go(func() { io.Copy(io.Discard, c.UnderlyingConn()) })
	}
	r1, h1 := sample()
	for _, c := range conns {
		c.Close()
	}
	wg.Wait()
	return (r1 - r0) / float64(n), (h1 - h0) / float64(n), nil
}

func (d *daemon) rss() int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.pid))
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.Atoi(f[1])
			return kb * 1024
		}
	}
	return 0
}

func (d *daemon) metric(name string) float64 {
	resp, err := d.hc.Get(d.url + "metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}

func median(v []float64) float64 { return pct(v, 50) }

func pct(v []float64, p float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	i := int(float64(len(s)-1)*p/100 + 0.5)
	return s[i]
}

func ms(v float64) string { return fmt.Sprintf("%.1f ms", v) }

func kb(v any) string {
	switch x := v.(type) {
	case int:
		return fmt.Sprintf("%.1f KB", float64(x)/1000)
	case float64:
		return fmt.Sprintf("%.1f KB", x/1000)
	}
	return fmt.Sprint(v)
}
