//go:build !linux

package main

// settle is a no-op where the harness cannot drop a file's cached pages
// (see settle_linux.go).
func settle(string) error { return nil }
