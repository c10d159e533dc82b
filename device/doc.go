// Package device is what the box touches outside itself: three status LEDs, one
// consent button, and the backends that drive them (real pins through periph.io's
// GPIO character device, or an in-memory simulator).
//
// The package is layered so that almost everything is pure and testable with a
// fake clock:
//
//   - [Patterns] and [Worst] turn the box's [State] into LED [Pattern]s
//     (docs/design.md, "The LEDs").
//   - [Driver] plays patterns on [gpio.PinOut]s, sleeping until the next level change.
//   - [Classifier] turns debounced button edges into [Press]es (short, long, triple);
//     [Button] feeds it from a [gpio.PinIn] with finite WaitForEdge timeouts.
//   - [Panel] maps presses to consent actions on a [ConsentQueue]
//     (docs/design.md, "The consent button").
//   - [Open] picks a backend (periph, sim or auto) and returns a [Device] that wires
//     the above together; [Device.Run] owns every goroutine and stops with its context.
//
// Time is always injected through a [clock.Clock]; package clocktest has a fake one.
// Hardware is probed only inside [Open] with the periph backend (host.Init is never
// called at package init).
package device
