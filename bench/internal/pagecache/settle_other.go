//go:build !linux

package pagecache

// Settle is a no-op where the harness cannot drop a file's cached pages
// (see settle_linux.go).
func Settle(string) error { return nil }
