package daemon

import (
	"net"
)

// sdNotify sends state ("READY=1", "WATCHDOG=1", "STOPPING=1") to systemd
// when it started us with Type=notify: the few lines of sd_notify(3) over
// the unixgram socket named by NOTIFY_SOCKET (an "@" prefix is the
// abstract namespace, which the net package maps itself). Without
// NOTIFY_SOCKET it does nothing.
func sdNotify(getenv func(string) string, state string) error {
	path := getenv("NOTIFY_SOCKET")
	if path == "" {
		return nil
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write([]byte(state))
	return err
}
