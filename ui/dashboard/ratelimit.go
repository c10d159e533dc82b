package dashboard

import (
	"sync"
	"time"
)

// Failed logins are limited by token buckets: one per client address and
// one for all of them together, so neither one client nor many can guess
// the password quickly. A failure takes a token; with none left, logins
// from that address (or from anyone, for the shared bucket) are refused
// with 429 without looking at the password, right or wrong. Successful
// logins take nothing.
const (
	loginBurst      = 5                // failures an address may make at once
	loginRefill     = 12 * time.Second // ...then one more per this (5 a minute)
	globalBurst     = 30
	globalRefill    = 2 * time.Second
	maxLimitedAddrs = 4096 // addresses remembered; full buckets are forgotten first
)

// bucket is a token bucket that refills continuously.
type bucket struct {
	tokens float64
	at     time.Time
}

func (b *bucket) level(now time.Time, burst int, refill time.Duration) float64 {
	if b.at.IsZero() {
		return float64(burst)
	}
	return min(float64(burst), b.tokens+float64(now.Sub(b.at))/float64(refill))
}

// limiter is the failed-login limiter. It is safe for concurrent use.
type limiter struct {
	now func() time.Time

	mu     sync.Mutex // guards the fields below
	addrs  map[string]*bucket
	global bucket
}

func newLimiter(now func() time.Time) *limiter {
	return &limiter{now: now, addrs: map[string]*bucket{}}
}

// allow reports whether addr may try a password now; if not, wait is how
// long until it may.
func (l *limiter) allow(addr string) (ok bool, wait time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	need := func(b *bucket, burst int, refill time.Duration) time.Duration {
		if lv := b.level(now, burst, refill); lv < 1 {
			return time.Duration((1 - lv) * float64(refill))
		}
		return 0
	}
	wait = need(&l.global, globalBurst, globalRefill)
	if b := l.addrs[addr]; b != nil {
		wait = max(wait, need(b, loginBurst, loginRefill))
	}
	return wait == 0, wait
}

// failed takes a token from addr's bucket and the shared one.
func (l *limiter) failed(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	take := func(b *bucket, burst int, refill time.Duration) {
		b.tokens, b.at = max(0, b.level(now, burst, refill)-1), now
	}
	take(&l.global, globalBurst, globalRefill)
	b := l.addrs[addr]
	if b == nil {
		if len(l.addrs) >= maxLimitedAddrs {
			l.forget(now)
		}
		b = &bucket{}
		l.addrs[addr] = b
	}
	take(b, loginBurst, loginRefill)
}

// forget drops the addresses whose buckets are full again, or, if none
// is, an arbitrary half: memory stays bounded whoever knocks.
func (l *limiter) forget(now time.Time) {
	for a, b := range l.addrs {
		if b.level(now, loginBurst, loginRefill) >= loginBurst {
			delete(l.addrs, a)
		}
	}
	for a := range l.addrs {
		if len(l.addrs) < maxLimitedAddrs/2 {
			break
		}
		delete(l.addrs, a)
	}
}
