package ledger

import (
	"reflect"
	"strings"
	"testing"
)

// The stored signature's form: every field of HeadSeal round-trips.
func TestHeadSealRoundTrips(t *testing.T) {
	want := HeadSeal{Seq: 7, Head: "ab12", Key: strings.Repeat("k", 32), Sig: strings.Repeat("s", 64)}
	n := reflect.TypeOf(want).NumField()
	if got := len(sealCodec.Names()); got != n {
		t.Fatalf("sealCodec has %d fields, HeadSeal %d", got, n)
	}
	var got HeadSeal
	if err := sealCodec.Decode(sealCodec.Append(nil, &want), &got); err != nil || got != want {
		t.Errorf("round trip: %+v, %v; want %+v", got, err, want)
	}
}
