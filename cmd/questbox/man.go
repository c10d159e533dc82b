package main

import (
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/questbox/questbox/internal/config"
)

// description is the man page's DESCRIPTION, its paragraphs separated
// by blank lines.
const description = "questbox is the daemon and the command line of a questbox: a small computer, such as a Raspberry Pi, " +
	"with three LEDs and a button, that runs research quests. Agents (a built-in demo, Claude Code, Codex, " +
	"a model behind an OpenAI-compatible server, or an agent outside the box) explore a quest's hypotheses; " +
	"every answer passes the quest's gate before it is locked, and what needs a human's consent waits " +
	"until the button is held.\n\n" +
	"`questbox run` is the daemon (questbox.service on the box). Every other verb talks to it over its " +
	"control socket, or, when no daemon runs, opens the store itself through the same handlers. " +
	"The dashboard and MQTT are the daemon's too."

// writeMan writes questbox(1) in roff (man(7)), from the help's source
// (help.go): the same verbs, headings, flags and exit codes as `questbox
// -h`. `questbox help --man` prints it; docs/reference/questbox.1 is its
// output, which the .deb and the image install.
func writeMan(w io.Writer) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p(".TH QUESTBOX 1 \"\" \"questbox\" \"questbox manual\"\n")
	p(".SH NAME\nquestbox \\- %s\n", roff(about))
	p(".SH SYNOPSIS\n.B questbox\n.I VERB\n%s\n.br\n.B questbox \\-\\-version\n.br\n.B questbox help\n.RI [ VERB ]\n", roff("[ARGS] "+globalUsage))
	p(".SH DESCRIPTION\n")
	for i, para := range strings.Split(description, "\n\n") {
		if i > 0 {
			p(".PP\n")
		}
		p("%s\n", roff(para))
	}
	p(".SH FLAGS\nThese flags work with every verb, before or after it.\n")
	for _, f := range globalFlagDocs() {
		manFlagItem(&b, f)
	}
	manFlagItem(&b, flagDoc{name: "version", usage: versionUsage + " (before the verb only)"})
	p(".TP\n.BR \\-h \", \" \\-\\-help\n%s\n", roff("The help of the level it follows: `questbox -h`, `questbox quest -h`, `questbox quest new -h`."))
	for _, s := range sections() {
		p(".SH %s\n", roff(strings.ToUpper(s.title)))
		for _, v := range s.verbs {
			p(".TP\n%s\n%s.\n", strings.TrimSpace(`\fBquestbox `+roff(v.name)+`\fR `+roff(v.usage)), roff(capitalize(v.summary)))
			if fs := verbFlagDocs(v); len(fs) > 0 {
				p(".RS\n")
				for _, f := range fs {
					manFlagItem(&b, f)
				}
				p(".RE\n")
			}
		}
	}
	p(".SH \"EXIT STATUS\"\n")
	for _, c := range exitCodes() {
		p(".TP\n.B %d\n%s.\n", c.code, roff(capitalize(c.meaning)))
	}
	data := config.Default().Daemon.Data
	item := func(macro, tag, text string) { p(".TP\n.%s %s\n%s\n", macro, roff(tag), roff(text)) }
	p(".SH ENVIRONMENT\n")
	item("B", "QUESTBOX_DATA", "The data directory, when --data is not given.")
	item("B", "QUESTBOX_CONFIG", "The config file, when --config is not given.")
	p(".SH FILES\n")
	item("I", config.DefaultPath, "The configuration file (TOML); `questbox run --check-config` checks it.")
	item("I", data, "The data directory: the store (questbox.db), the agent runs' logs, the dashboard's password file.")
	item("I", filepath.Join(data, "questbox.sock"), "The control socket, unless daemon.socket names another.")
	item("I", "/etc/questbox/release.pub", "The key `questbox update` checks releases against.")
	p(".SH \"SEE ALSO\"\n%s\n", roff("The pages under docs/ in questbox's source, and its references: docs/reference/cli.md "+
		"(this page), config.md (every key of the config file), api.md (the HTTP API) and mqtt.md (MQTT and Home Assistant); "+
		"/usr/share/doc/questbox/README.md on the box."))
	_, err := io.WriteString(w, b.String())
	return err
}

// manFlagItem writes one flag as a tagged paragraph.
func manFlagItem(b *strings.Builder, f flagDoc) {
	if f.arg != "" {
		fmt.Fprintf(b, ".TP\n.BI \\-\\-%s \" %s\"\n", roff(f.name), roff(f.arg))
	} else {
		fmt.Fprintf(b, ".TP\n.B \\-\\-%s\n", roff(f.name))
	}
	text := capitalize(f.usage)
	if f.def != "" {
		text += " (default " + f.def + ")"
	}
	fmt.Fprintf(b, "%s\n", roff(text))
}

// capitalize is s with its first letter upper case.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

var (
	// option is a hyphen of an option (--data, -h), which roff must print
	// as a minus sign, not a hyphen that may be broken or changed.
	option = regexp.MustCompile(`(^|[^\w-])(--?)([a-zA-Z])`)
	// codeSpan is `text`, printed in bold.
	codeSpan = regexp.MustCompile("`([^`]+)`")
)

// roff is text as one line of a man page's body: backslashes escaped,
// options' hyphens as minus signs, `code` in bold, and a line that
// would start with a control character (a dot or an apostrophe) made
// text.
func roff(text string) string {
	s := strings.ReplaceAll(text, `\`, `\e`)
	s = option.ReplaceAllStringFunc(s, func(m string) string {
		return strings.ReplaceAll(m, "-", `\-`)
	})
	s = codeSpan.ReplaceAllString(s, `\fB$1\fR`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
