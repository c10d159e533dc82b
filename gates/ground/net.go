package ground

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"
)

// NetConfig configures [Net]. The zero value is usable: every field has a
// conservative default.
type NetConfig struct {
	// Timeout bounds each whole operation: a fetch including redirects and
	// reading the body, an MX lookup, a dial (default 10s).
	Timeout time.Duration
	// MaxBody is the most bytes of a body kept (default 1 MiB); the rest is
	// not read and the body is marked truncated.
	MaxBody int64
	// MaxRedirects is the most redirects followed (default 5); more is an
	// answer ("too many redirects"), not a transport error.
	MaxRedirects int
	// AllowPrivate lets requests reach addresses that are not globally
	// reachable: loopback, private, shared (100.64.0.0/10), link-local,
	// documentation, benchmarking, reserved and every other non-global
	// block of the IANA special-purpose registries (see checkAddr). Off by
	// default, so that a cited URL cannot make the box probe its own
	// network, its tailnet or the dashboard (SSRF). The check runs at dial
	// time on each resolved address, so a public name that resolves (or
	// re-resolves, DNS rebinding) to a refused address is refused too.
	// Tests against 127.0.0.1 turn it on.
	AllowPrivate bool
	// UserAgent is sent with every fetch (default "questbox-ground").
	UserAgent string
	// DNS is the resolver for MX lookups and dials (default: the system's).
	DNS *net.Resolver
}

// Net is the real [Resolver]: net/http for bodies, net.Resolver for MX, a
// net.Dialer for reachability. Safe for concurrent use.
type Net struct {
	cfg    NetConfig
	dialer *net.Dialer
	client *http.Client
}

// errRedirects is returned (as an answer) after MaxRedirects redirects.
var errRedirects = errors.New("too many redirects")

// NewNet returns a Net for cfg.
func NewNet(cfg NetConfig) *Net {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 1 << 20
	}
	if cfg.MaxRedirects <= 0 {
		cfg.MaxRedirects = 5
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "questbox-ground"
	}
	n := &Net{cfg: cfg}
	n.dialer = &net.Dialer{Timeout: cfg.Timeout, Resolver: cfg.DNS}
	if !cfg.AllowPrivate {
		n.dialer.Control = refusePrivate
	}
	tr := &http.Transport{
		Proxy:                  nil, // never through an environment proxy: the answer must come from the source
		DialContext:            n.dialer.DialContext,
		TLSHandshakeTimeout:    cfg.Timeout,
		ResponseHeaderTimeout:  cfg.Timeout,
		ExpectContinueTimeout:  time.Second,
		IdleConnTimeout:        30 * time.Second,
		MaxIdleConns:           4,
		MaxResponseHeaderBytes: 64 << 10,
		ForceAttemptHTTP2:      true,
	}
	n.client = &http.Client{
		Transport: tr,
		Timeout:   cfg.Timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > cfg.MaxRedirects {
				return errRedirects
			}
			return nil
		},
	}
	return n
}

// refusePrivate is the dialer's Control: it runs on the resolved address
// of every connection attempt (each address Happy Eyeballs tries, each
// redirect), so neither a public name resolving to a refused address nor a
// DNS answer that changes between checks gets through.
func refusePrivate(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%s: %w", address, errBlocked)
	}
	return checkAddr(ap.Addr())
}

// FetchURL implements [Resolver]. Only http and https URLs are fetched.
func (n *Net) FetchURL(ctx context.Context, rawURL string) (Body, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Body{}, fmt.Errorf("ground: fetch %q: not an absolute http(s) URL", rawURL)
	}
	ctx, cancel := context.WithTimeout(ctx, n.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Body{}, fmt.Errorf("ground: fetch %q: %w", rawURL, err)
	}
	req.Header.Set("User-Agent", n.cfg.UserAgent)
	resp, err := n.client.Do(req)
	if err != nil {
		return Body{}, classify("fetch", rawURL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, n.cfg.MaxBody+1))
	if err != nil {
		return Body{}, classify("fetch", rawURL, err)
	}
	b := Body{Status: resp.StatusCode, Data: data}
	if int64(len(data)) > n.cfg.MaxBody {
		b.Data, b.Truncated = data[:n.cfg.MaxBody], true
	}
	return b, nil
}

// LookupMX implements [Resolver]. A domain that does not exist has no MX.
func (n *Net) LookupMX(ctx context.Context, domain string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.Timeout)
	defer cancel()
	r := n.cfg.DNS
	if r == nil {
		r = net.DefaultResolver
	}
	mx, err := r.LookupMX(ctx, domain)
	if err != nil {
		var de *net.DNSError
		if errors.As(err, &de) && de.IsNotFound {
			return nil, nil
		}
		return nil, classify("mx", domain, err)
	}
	out := make([]string, 0, len(mx))
	for _, m := range mx {
		if h := strings.TrimSuffix(m.Host, "."); h != "" {
			out = append(out, h)
		}
	}
	slices.Sort(out) // deterministic, whatever order DNS gave
	return out, nil
}

// Dial implements [Resolver].
func (n *Net) Dial(ctx context.Context, hostport string) error {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.Timeout)
	defer cancel()
	c, err := n.dialer.DialContext(ctx, "tcp", hostport)
	if err != nil {
		return classify("dial", hostport, err)
	}
	return c.Close()
}

// classify wraps err as a *TransportError unless it is an answer about the
// target: a refused private address, too many redirects, a rejected TLS
// certificate, or a name that does not exist.
func classify(op, target string, err error) error {
	var (
		de  *net.DNSError
		cve *tls.CertificateVerificationError
		ua  x509.UnknownAuthorityError
		hn  x509.HostnameError
		ci  x509.CertificateInvalidError
	)
	switch {
	case errors.Is(err, errBlocked), errors.Is(err, errRedirects):
		return fmt.Errorf("ground: %s %s: %w", op, target, err)
	case errors.As(err, &cve), errors.As(err, &ua), errors.As(err, &hn), errors.As(err, &ci):
		return fmt.Errorf("ground: %s %s: TLS certificate rejected: %w", op, target, err)
	case errors.As(err, &de) && de.IsNotFound:
		return fmt.Errorf("ground: %s %s: no such host: %w", op, target, err)
	}
	return &TransportError{Op: op, Target: target, Err: err}
}
