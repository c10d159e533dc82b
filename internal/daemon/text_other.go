//go:build !linux

package daemon

import "context"

// releaseText does nothing here: see text_linux.go. The daemon runs on
// Linux.
func releaseText() (int64, error) { return 0, nil }

// unmapTextWhileBusy does nothing here: see text_linux.go.
func unmapTextWhileBusy(ctx context.Context, commits func() uint64) {}
