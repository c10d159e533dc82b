package humangate

import (
	"testing"
	"time"

	"github.com/questbox/questbox/engine/domain"
)

// TestExpiryIsOneRule: a request expires the moment its expiry has
// passed, never when expiry is 0, and its deadline says the same moment.
func TestExpiryIsOneRule(t *testing.T) {
	since := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		now    time.Time
		expiry time.Duration
		want   bool
	}{
		{"before the deadline", since.Add(time.Hour - time.Second), time.Hour, false},
		{"at the deadline", since.Add(time.Hour), time.Hour, true},
		{"after the deadline", since.Add(2 * time.Hour), time.Hour, true},
		{"requests never expire", since.Add(1000 * time.Hour), 0, false},
	}
	for _, tt := range tests {
		if got := Expired(since, tt.now, tt.expiry); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
		d, ok := Deadline(domain.ConsentRequest{Since: since}, tt.expiry)
		if ok != (tt.expiry > 0) {
			t.Errorf("%s: deadline %v, got ok %v, want %v", tt.name, d, ok, tt.expiry > 0)
		}
		if ok && !Expired(since, d, tt.expiry) {
			t.Errorf("%s: got a request not expired at its deadline %v", tt.name, d)
		}
	}
}
