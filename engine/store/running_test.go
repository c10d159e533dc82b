package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
)

// A compact entry whose checksum is sound over a body that breaks the form
// is refused by the decoder itself (fields past the end, unknown bits,
// zeros written), never read as another run.
func TestRunningEntryBrokenFormRefused(t *testing.T) {
	var got RunningEntry
	for name, body := range map[string][]byte{
		"unknown bit":      {runningForm, 0x80, 0x80, 0x80, 0x02},
		"seq and id":       {runningForm, rfSeq | rfID, 1, 1, 'x'},
		"seq 0":            {runningForm, rfSeq, 0},
		"string past end":  {runningForm, rfRole, 9, 'a'},
		"attempt 0":        {runningForm, 0x80, 0x01, 0},
		"bytes left":       {runningForm, rfSeq, 1, 7},
		"nanoseconds ≥ 1s": {runningForm, 0x80, 0x02, 2, 0x80, 0x94, 0xeb, 0xdc, 0x03},
	} {
		d := binary32(body)
		if err := DecodeRunning(d, "q7", "n99", &got); !errors.Is(err, ErrRunningEntry) {
			t.Errorf("%s: %v, %+v; want ErrRunningEntry", name, err, got)
		}
	}
}

// binary32 is body with its checksum, as a sealed record ends.
func binary32(body []byte) []byte {
	return binary.BigEndian.AppendUint32(bytes.Clone(body), crc32.Checksum(body, castagnoli))
}
