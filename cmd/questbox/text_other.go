//go:build !linux

package main

// releaseText does nothing here: see text_linux.go. The daemon runs on
// Linux.
func releaseText() (int64, error) { return 0, nil }
