package domain

import "testing"

// TestStopByAPersonNeedsNoAttention: a quest a person stopped, from any
// face (and as recorded before stops named their face), is paused on
// purpose; one the engine stopped needs attention.
func TestStopByAPersonNeedsNoAttention(t *testing.T) {
	for _, tc := range []struct {
		reason string
		want   bool
	}{
		{StoppedReason(SourceCLI), false},
		{StoppedReason(SourceDashboard), false},
		{StoppedReason(SourceMQTT), false},
		{"stopped by owner", false},
		{"no progress: the same answer 3 times", true},
		{"needs attention: command provider \"x\": agent executable not found", true},
		{"stopped via the moon", true},
	} {
		q := &Quest{Status: QuestStopped, Reason: tc.reason}
		if got := q.NeedsAttention(); got != tc.want {
			t.Errorf("stopped (%s): got needs attention %v, want %v", tc.reason, got, tc.want)
		}
	}
}
