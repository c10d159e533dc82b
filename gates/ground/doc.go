// Package ground is the only part of gates that touches the world
// (docs/design.md, "Staged evaluation and ground"). Rules never do I/O; they
// declare [gates.Request] values, and ground answers them before the rules
// run.
//
// # Contracts
//
//   - [Resolver] answers HTTP(S) bodies, MX records and TCP reachability;
//     [Net] is the real one (net/http and net.Resolver, bounded bodies,
//     timeouts on everything, bounded redirects, and every address that is
//     not globally reachable per the IANA special-purpose registries refused
//     at dial time unless allowed; see addr.go). [Runner] runs programmatic
//     checks; [Exec] is the real one (os/exec, bounded output, a timeout per
//     request).
//   - A [Snapshot] belongs to one evaluation: it implements [gates.Grounder],
//     resolves each distinct request (by [gates.Request.Key]) at most once
//     however many rules and goroutines ask, and is safe for concurrent use.
//   - Errors are classified: a [*TransportError] means the box could not
//     get an answer (connection refused, DNS timeout or server failure, no
//     route, reset, timeout) and becomes Observation.Transport, which makes
//     staged evaluation defer instead of fail. Any other error is an answer
//     about the target (bad URL, too many redirects, TLS certificate
//     rejected, private address refused, program not found) and becomes
//     Observation.Err. An HTTP 404 is not an error at all: it is a status.
//     "No such host" (NXDOMAIN) is an answer too.
//   - Connection refused is a transport error for every kind, including
//     dial: the box cannot tell a refusing target from a refusing captive
//     portal or firewall on its own side, so it defers rather than punish
//     an answer for the local network.
//   - [Probe] says whether the box is online: a cheap check, cached for a
//     TTL on an injected clock, with a callback when the state changes.
package ground
