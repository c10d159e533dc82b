package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/questbox/questbox/ui/dashboard"
)

// passwordCmd is `password`: a new dashboard password. It writes the
// password file itself (the daemon, running or not, reads it again when it
// changes), so it works with and without a daemon; every session ends.
type passwordCmd struct{ stdin bool }

func (c *passwordCmd) flags(fs *flag.FlagSet) {
	fs.BoolVar(&c.stdin, "stdin", false, fmt.Sprintf("read the new password from stdin (at least %d characters) instead of generating one", dashboard.MinPassword))
}

func (c *passwordCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("password", args); err != nil {
		return err
	}
	pw := dashboard.NewPassword()
	if c.stdin {
		line, err := bufio.NewReader(e.stdin).ReadString('\n')
		if err != nil && line == "" {
			return usagef("password --stdin: no password on stdin")
		}
		pw = strings.TrimRight(line, "\r\n")
	}
	path := e.cfg.DashboardPasswordFile()
	if err := dashboard.SetPassword(path, pw); err != nil {
		return usagef("password: %v", err)
	}
	if err := dashboard.ForgetFirstPassword(e.cfg.DashboardFirstPasswordFile()); err != nil {
		return usagef("password: %v", err)
	}
	if e.json {
		out := map[string]string{"file": path}
		if !c.stdin {
			out["password"] = pw
		}
		return printJSON(e.stdout, out)
	}
	if !c.stdin {
		fmt.Fprintf(e.stdout, "new dashboard password: %s\n", pw)
	}
	fmt.Fprintf(e.stdout, "written to %s; every dashboard session has ended\n", path)
	return nil
}
