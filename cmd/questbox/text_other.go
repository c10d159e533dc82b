//go:build !linux

package main

import "context"

// releaseText does nothing here: see text_linux.go. The daemon runs on
// Linux.
func releaseText() (int64, error) { return 0, nil }

// unmapTextWhileBusy does nothing here: see text_linux.go.
func unmapTextWhileBusy(ctx context.Context, commits func() uint64) {}
