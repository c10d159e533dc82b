package ground

import (
	"context"
	"errors"
	"fmt"
)

// Body is an HTTP response as ground keeps it.
type Body struct {
	Status    int    // of the final response, after redirects
	Data      []byte // at most the resolver's body limit
	Truncated bool   // the body was longer than the limit
}

// Resolver answers network requests. Implementations must be safe for
// concurrent use and must honour ctx. A failure to get an answer must be
// returned as (or wrap) a [*TransportError]; any other error is taken as an
// answer about the target.
type Resolver interface {
	// FetchURL GETs url. A non-2xx status is not an error.
	FetchURL(ctx context.Context, url string) (Body, error)
	// LookupMX returns the MX hosts of domain, or none (and no error) when
	// the domain does not exist or has no MX records.
	LookupMX(ctx context.Context, domain string) ([]string, error)
	// Dial opens and closes a TCP connection to hostport.
	Dial(ctx context.Context, hostport string) error
}

// RunResult is how a program check ended.
type RunResult struct {
	ExitCode int    // -1 if killed
	Stdout   string // at most the runner's output limit
	TimedOut bool
}

// Runner runs programmatic checks. ctx carries the request's timeout; a
// program that outlives it is killed and reported with TimedOut, not as an
// error. An error means the program could not be started.
type Runner interface {
	Run(ctx context.Context, argv []string, stdin []byte) (RunResult, error)
}

// TransportError is returned when the box could not get an answer. It is
// the one error that makes staged evaluation defer instead of fail.
type TransportError struct {
	Op     string // fetch, mx, dial
	Target string
	Err    error
}

func (e *TransportError) Error() string {
	return fmt.Sprintf("ground: %s %s: %v", e.Op, e.Target, e.Err)
}

func (e *TransportError) Unwrap() error { return e.Err }

// IsTransport reports whether err is or wraps a [*TransportError].
func IsTransport(err error) bool {
	var te *TransportError
	return errors.As(err, &te)
}
