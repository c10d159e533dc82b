package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/questbox/questbox/internal/config"
	"github.com/questbox/questbox/internal/daemon"
	"github.com/questbox/questbox/ui/api"
)

// Exit codes (docs/design.md, "The CLI").
const (
	exitOK     = api.ExitOK
	exitUsage  = api.ExitUsage  // usage or input error, bad config, a refused request
	exitStore  = api.ExitStore  // the store or the daemon is unavailable (in use, corrupt, newer schema, socket)
	exitFail   = api.ExitFail   // the verdict was FAIL
	exitReview = api.ExitReview // the verdict was REVIEW
)

// exitError carries an exit code; the daemon returns the same type.
type exitError = daemon.ExitError

// usagef is a usage or input error (exit 1).
func usagef(format string, args ...any) error {
	return &exitError{Code: exitUsage, Err: fmt.Errorf(format, args...)}
}

// exitCode maps an error to its exit code (docs/design.md, "The CLI"): an
// exitError says it; everything else is answered by the API's error table.
func exitCode(err error) int {
	if ee, ok := errors.AsType[*exitError](err); ok {
		return ee.Code
	}
	return api.ExitCodeOf(err)
}

// report prints err once, on w, as "questbox: <message>" (one line per
// problem when there are several) and returns the exit code.
func report(w io.Writer, err error) int {
	code := exitCode(err)
	if err == nil {
		return code
	}
	if ee, ok := errors.AsType[*exitError](err); ok && ee.Err == nil {
		return code
	}
	for line := range strings.SplitSeq(strings.TrimRight(err.Error(), "\n"), "\n") {
		fmt.Fprintf(w, "questbox: %s\n", line)
	}
	return code
}

// run is the whole program: it runs one verb with args (without the program
// name) and returns an error carrying the exit code (see report).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cwd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("working directory: %w", err)
	}
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv, cwd: cwd}
	return e.exec(ctx, args)
}

// env is what a verb runs against: its I/O, the resolved configuration
// and the API client. The CLI builds one per invocation.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	cwd            string // the invoking process's working directory

	// From the global flags every verb takes, before or after it
	// (globalFlags).
	dataFlag, configFlag string
	json                 bool

	cfg  *config.Config // resolved: flag > env > file > default
	data string         // resolved data directory (absolute)
	// dataFrom says who chose data: "--data", "QUESTBOX_DATA", "the
	// config file F"; "" for the built-in default (see internal/daemon's mayCreateStore).
	dataFrom string
	log      *slog.Logger
	// redact masks the configured secrets in whatever the verb prints,
	// logs or returns (set with cfg).
	redact *config.Redactor

	door *door // the API: the daemon's socket, or in-process
}

// command is one verb's implementation. A fresh value is made per
// invocation.
type command interface {
	// flags declares the verb's own flags (--data, --config and --json are
	// declared for every verb by the dispatcher).
	flags(fs *flag.FlagSet)
	// run executes the verb with its positional arguments.
	run(ctx context.Context, e *env, args []string) error
}

// verbMode says where a verb runs.
type verbMode int

const (
	// viaAPI verbs are clients of the API: the running daemon's over its
	// control socket, or the same handlers in-process over the store when
	// no daemon answers.
	viaAPI verbMode = iota
	// standalone verbs run in the invoking process and never through the
	// API: run, salvage, selftest, version, verify-export.
	standalone
)

// verb is one entry of the CLI's registry.
type verb struct {
	name    string // "quest new"
	usage   string // what follows the name
	summary string
	mode    verbMode
	new     func() command
}

// verbs is the registry, in help order.
func verbs() []verb {
	return []verb{
		{"run", "[--tick D] [--gpio auto|sim|periph] [--listen ADDR] [--demo] [--check-config]", "run the daemon", standalone, func() command { return new(runCmd) }},
		{"tick", "", "run exactly one tick, wait for its runs, print what happened", viaAPI, func() command { return new(tickCmd) }},
		{"quest new", "NAME --direction TEXT [--mode solo|team] [--roles R,R] [--provider P] [--gate G] [--max-agent-runs N] [--max-tries N] [--wall-clock D] [--token-budget N] [--checkpoint ROLE]... [--role-provider ROLE=PROVIDER]... [--egress V,V] [--project PATH] [--preset council] [--council reviewer:R,judge:J] [--council-provider reviewer=P,judge=P] [--gates PHASE,PHASE]", "create a quest; prints its id", viaAPI, func() command { return new(questNewCmd) }},
		{"quest list", "", "list quests", viaAPI, func() command { return new(questListCmd) }},
		{"quest show", "ID", "show a quest, its nodes and edges", viaAPI, func() command { return new(questShowCmd) }},
		{"quest result", "ID", "what the quest found: its conclusions, growing and dead ends, with evidence, citations and who approved them", viaAPI, func() command { return new(questResultCmd) }},
		{"quest stop", "ID", "pause a quest", viaAPI, func() command { return &questStateCmd{stop: true} }},
		{"quest resume", "ID", "resume a stopped quest", viaAPI, func() command { return &questStateCmd{} }},
		{"quest abort-node", "NODE [--reason R]", "abort a non-terminal node", viaAPI, func() command { return new(abortNodeCmd) }},
		{"scan", "QUEST [HYPOTHESIS...|--from FILE|-]", "seed pending nodes (duplicates skipped)", viaAPI, func() command { return new(scanCmd) }},
		{"next", "QUEST", "print the next node's prompt (changes nothing)", viaAPI, func() command { return new(nextCmd) }},
		{"submit", "QUEST --node N [--in FILE|-]", "submit an answer; prints the verdict (exit 3 FAIL, 4 REVIEW; DEFERRED offline: exit 0, judged again when the network is back)", viaAPI, func() command { return new(submitCmd) }},
		{"status", "QUEST", "counts per status and remaining budget", viaAPI, func() command { return new(statusCmd) }},
		{"runs", "[QUEST] [--node N]", "the agent runs (of a quest, of a node): provider, role, times, how each ended, tokens, bytes", viaAPI, func() command { return new(runsCmd) }},
		{"logs", "RUN|NODE [--follow]", "a run's log (its stderr and answer; a node's latest run); --follow streams a running agent until it ends", viaAPI, func() command { return new(logsCmd) }},
		{"export", "QUEST [--out FILE]", "JSONL of terminal nodes, each exported once", viaAPI, func() command { return new(exportCmd) }},
		{"rules", "[--quest Q | --gate G]", "the built-in rule kinds and a gate profile's rules (id, level, stage, edges): what the gate blocks", viaAPI, func() command { return new(rulesCmd) }},
		{"verify", "", "check the store, the verdict ledger chain and its signature by this box's key (printed)", viaAPI, func() command { return new(verifyCmd) }},
		{"verify-export", "FILE [--key FINGERPRINT]", "check an export's signatures offline (no store needed)", standalone, func() command { return new(verifyExportCmd) }},
		{"backup", "[--out FILE|DIR]", "write a verified copy of the store while the daemon runs (default questbox-YYYYmmdd-HHMMSS.db here)", viaAPI, func() command { return new(backupCmd) }},
		{"restore", "FILE", "verify a backup and make it the store, keeping the current one as questbox.db.before-restore-TIME", viaAPI, func() command { return new(restoreCmd) }},
		{"consent list", "", "the consent requests that wait for a human, oldest first: what waits and why", viaAPI, func() command { return new(consentListCmd) }},
		{"consent show", "NODE", "one consent request: what waits, why, and the evidence and citations a yes approves", viaAPI, func() command { return new(consentShowCmd) }},
		{"device press", "[--hold D] [--times N]", "press the simulated button through the daemon (hold 2s approves, 3 times rejects)", viaAPI, func() command { return new(devicePressCmd) }},
		{"device status", "", "the LEDs, the button and the consent queue, as the daemon shows them", viaAPI, func() command { return new(deviceStatusCmd) }},
		{"selftest", "[--gpio auto|periph]", "check the LED and button wiring on real pins (stop the daemon first)", standalone, func() command { return new(selftestCmd) }},
		{"password", "[--stdin]", "set a new dashboard password (generated and printed, or read from stdin); ends every session", standalone, func() command { return new(passwordCmd) }},
		{"salvage", "", "copy what is readable of a corrupt store into a fresh one", standalone, func() command { return new(salvageCmd) }},
		{"update", "FILE|URL [--sig FILE|URL] [--key FILE]", "install a signed release: the daemon restarts into it and keeps it only once ready and healthy", standalone, func() command { return new(updateCmd) }},
		{"version", "", "print the version, and the one kept for rollback", standalone, func() command { return new(versionCmd) }},
	}
}

// lookup finds the verb named by the first one or two words of args.
func lookup(args []string) (*verb, []string) {
	all := verbs()
	if len(args) >= 2 {
		for i := range all {
			if all[i].name == args[0]+" "+args[1] {
				return &all[i], args[2:]
			}
		}
	}
	for i := range all {
		if all[i].name == args[0] {
			return &all[i], args[1:]
		}
	}
	return nil, nil
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool { return slices.Contains([]string{"-h", "-help", "--help"}, arg) }

// groups are the verbs of two words, by their first word.
func groups() map[string][]string {
	g := map[string][]string{}
	for _, v := range verbs() {
		if first, second, ok := strings.Cut(v.name, " "); ok {
			g[first] = append(g[first], second)
		}
	}
	return g
}

// unknownVerb is the error for a verb that does not exist, with the
// nearest one when a name is close (config.Closest, the rule config keys
// use too).
func unknownVerb(args []string) error {
	g := groups()
	if subs, ok := g[args[0]]; ok {
		if len(args) < 2 || strings.HasPrefix(args[1], "-") {
			return usagef("%s needs one of %s (see `questbox %s -h`)", args[0], strings.Join(subs, ", "), args[0])
		}
		hint := ""
		if s := config.Closest(args[1], subs); s != "" {
			hint = fmt.Sprintf("did you mean `questbox %s %s`? ", args[0], s)
		}
		return usagef("unknown verb %q: %s%s takes %s (see `questbox %s -h`)", args[0]+" "+args[1], hint, args[0], strings.Join(subs, ", "), args[0])
	}
	var names []string
	for _, v := range verbs() {
		if first, _, _ := strings.Cut(v.name, " "); !slices.Contains(names, first) {
			names = append(names, first)
		}
	}
	if s := config.Closest(args[0], append(names, "help")); s != "" {
		return usagef("unknown verb %q; did you mean `questbox %s`? (run `questbox help`)", args[0], strings.Join(append([]string{s}, args[1:min(len(args), 2)]...), " "))
	}
	return usagef("unknown verb %q (run `questbox help`)", args[0])
}

// exec parses args and runs the verb they name: in the daemon when one
// answers on the control socket, else against the store directly. -h
// (or --help) anywhere prints the help of the level it follows and exits
// 0, as `help VERB` does.
func (e *env) exec(ctx context.Context, args []string) error {
	args, err := e.leadingFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		usage(e.stdout)
		return nil
	}
	if err != nil {
		return err
	}
	if len(args) == 0 {
		usage(e.stderr)
		return usagef("no verb given")
	}
	if args[0] == "help" || isHelp(args[0]) {
		if len(args) == 2 && args[1] == manFlag {
			return writeMan(e.stdout)
		}
		if len(args) > 1 && !isHelp(args[1]) {
			return e.exec(ctx, append(args[1:], "-h"))
		}
		usage(e.stdout)
		return nil
	}
	v, rest := lookup(args)
	if v == nil {
		if _, ok := groups()[args[0]]; ok && len(args) > 1 && (isHelp(args[1]) || args[1] == "help") {
			groupUsage(e.stdout, args[0])
			return nil
		}
		return unknownVerb(args)
	}
	cmd := v.new()
	fs := e.flagSet(v, cmd)
	pos, err := parseArgs(fs, rest)
	if errors.Is(err, flag.ErrHelp) {
		e.help(v, cmd, fs)
		return nil
	}
	if err != nil {
		return usagef("%s: %v (see `questbox %s -h`)", v.name, err, v.name)
	}
	if err := e.resolve(); err != nil {
		return err
	}
	if v.mode == standalone {
		return e.redact.Error(cmd.run(ctx, e, pos))
	}
	e.door = &door{e: e}
	defer e.door.close()
	return e.redact.Error(cmd.run(ctx, e, pos))
}

// defaulter is a verb whose flags default to the configuration's values
// (quest new's budgets): its help shows them.
type defaulter interface {
	defaults(cfg *config.Config) map[string]string
}

// help prints a verb's usage and flags on stdout. A verb whose defaults
// come from the configuration shows them as this invocation would use
// them (the built-in ones when the config does not load).
func (e *env) help(v *verb, cmd command, fs *flag.FlagSet) {
	fmt.Fprintf(e.stdout, "usage: questbox %s\n%s\n\nflags:\n", strings.TrimSpace(v.name+" "+v.usage), v.summary)
	if d, ok := cmd.(defaulter); ok {
		fmt.Fprintln(e.stdout, "  (the defaults shown are the config's [defaults], which a flag overrides)")
		cfg, err := e.loadConfig()
		if err != nil {
			cfg = config.Default()
		}
		for name, val := range d.defaults(cfg) {
			if f := fs.Lookup(name); f != nil {
				f.DefValue = val
			}
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		if d, ok := f.Value.(*durationFlag); ok {
			f.Value = d.Value // the flag package names the type of its own
		}
	})
	fs.SetOutput(e.stdout)
	fs.PrintDefaults()
}

// durationFlag is a duration flag whose error says how to write one: a
// bare number has no unit (--hold 2 means --hold 2s).
type durationFlag struct{ flag.Value }

func (d *durationFlag) Set(s string) error {
	if err := d.Value.Set(s); err != nil {
		if _, nerr := strconv.ParseFloat(s, 64); nerr == nil {
			return fmt.Errorf("%q has no unit; did you mean %ss? (a duration is a number with a unit: 500ms, 2s, 5m, 24h)", s, s)
		}
		return fmt.Errorf("%q is not a duration (a number with a unit: 500ms, 2s, 5m, 24h)", s)
	}
	return nil
}

// withDurationHints makes every duration flag of fs a durationFlag.
func withDurationHints(fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		if g, ok := f.Value.(flag.Getter); ok {
			if _, ok := g.Get().(time.Duration); ok {
				f.Value = &durationFlag{f.Value}
			}
		}
	})
}

// globalFlags declares the flags every verb takes, before the verb
// (`questbox --data ./data quest list`) or after it (`questbox quest
// list --data ./data`).
func (e *env) globalFlags(fs *flag.FlagSet) {
	fs.StringVar(&e.dataFlag, "data", e.dataFlag, "the data directory (env QUESTBOX_DATA; default: the config's daemon.data)")
	fs.StringVar(&e.configFlag, "config", e.configFlag, "the config file (env QUESTBOX_CONFIG; default "+config.DefaultPath+" if it exists)")
	fs.BoolVar(&e.json, "json", e.json, "print JSON")
}

// flagSet is the flag set of v: the global flags and cmd's own.
func (e *env) flagSet(v *verb, cmd command) *flag.FlagSet {
	fs := flag.NewFlagSet("questbox "+v.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	e.globalFlags(fs)
	cmd.flags(fs)
	withDurationHints(fs)
	return fs
}

// leadingFlags takes the global flags given before the verb, and
// --version, which stands for the verb `version`.
func (e *env) leadingFlags(args []string) ([]string, error) {
	if len(args) == 0 || !strings.HasPrefix(args[0], "-") || isHelp(args[0]) {
		return args, nil
	}
	fs := flag.NewFlagSet("questbox", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	e.globalFlags(fs)
	version := fs.Bool("version", false, versionUsage)
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return nil, err
	} else if err != nil {
		return nil, usagef("%v (before the verb come only --data, --config, --json and --version; see `questbox -h`)", err)
	}
	if *version {
		if fs.NArg() > 0 {
			return nil, usagef("--version takes no verb, got %q (`questbox version` is the verb)", fs.Args())
		}
		return []string{"version"}, nil
	}
	return fs.Args(), nil
}

// parseArgs parses flags anywhere among the positional arguments ("quest
// new NAME --direction X"); "--" ends the flags.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// listFlag is a flag that may be repeated (--checkpoint ROLE ...).
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// wantArgs checks the number of positional arguments.
func wantArgs(verb string, args []string, names ...string) error {
	if len(args) != len(names) {
		if len(names) == 0 {
			return usagef("%s takes no arguments, got %q", verb, args)
		}
		hint := ""
		if len(args) < len(names) && slices.ContainsFunc(names, func(n string) bool { return n == "QUEST" || n == "ID" }) {
			hint = " (`questbox quest list` lists the quests)"
		}
		return usagef("%s needs %s, got %d argument(s)%s", verb, strings.Join(names, " "), len(args), hint)
	}
	return nil
}
