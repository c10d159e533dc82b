// Package activity is what runs and what waits at one moment, counted
// once for every face: the live consent requests the button can answer
// and those expired, the agents running, and the quests that need the
// owner or hold a blocked Team ([Activity]). The LEDs, the API's summary,
// MQTT and /metrics all read this one count ([Read], [Counts]).
//
// It reads the consent queue and the quests through the engine's
// [Source], which keeps their counts in step; it scans no node and writes
// nothing. See docs/design.md, "The LEDs" and "Memory on a small box".
package activity
