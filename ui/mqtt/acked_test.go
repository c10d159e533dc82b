package mqtt

import (
	"testing"
	"time"

	"github.com/questbox/questbox/ui/mqtt/mosquittotest"
)

// waitAcked waits until the client has the broker's PUBACK for every event
// up to seq. A subscriber can see the last event before the publisher sees
// its PUBACK; a test that stops the client to check the cursor must wait
// for the acknowledgement, or it checks a race (it failed under qemu, where
// everything is slower, as on a Pi Zero).
func waitAcked(t *testing.T, c *Client, seq uint64) {
	t.Helper()
	deadline := time.Now().Add(mosquittotest.WaitTimeout)
	for c.Stats().Sent < seq {
		if time.Now().After(deadline) {
			t.Fatalf("the PUBACK for seq %d never came: %+v", seq, c.Stats())
		}
		time.Sleep(time.Millisecond) // polls a counter; bounded above
	}
}
