// Package mqtt is the box's MQTT presence (docs/design.md, "MQTT"): it
// publishes the box's events and state to a broker for home automation,
// announces the box to Home Assistant, and takes the few commands the owner
// allows.
//
// It is a face of the API (package ui/api), like the dashboard, and speaks
// nothing else: the retained state comes from the API's typed calls, the
// events from its outbox (api.Outbox) and event watch (api.Server.Watch),
// and every command is a call of the API through its own handlers, as the
// CLI's are.
//
// # Topics
//
// Under the base topic (questbox/<device_id> by default):
//
//	<base>/status               retained "online"/"offline"; "offline" is also the Last Will
//	<base>/event/<kind>         every event (node, verdict, consent, quest, device), QoS 1,
//	                            not retained: api.Event JSON with its seq
//	<base>/quest/<id>/state     retained api.Quest JSON of each quest; an empty retained
//	                            message removes a quest that no longer exists
//	<base>/consent              retained JSON list of api.Consent (pending, oldest first):
//	                            what waits, why, the deliverable; fitted to
//	                            api.MaxConsentPayload (newest deliverables left out first)
//	<base>/summary              retained api.Summary: what Home Assistant's sensors read
//	<base>/cmd/...              commands, only with Options.Commands (see below)
//
// Payloads are the API's view types (package ui/api): the JSON a dashboard
// client gets, never the store's structs. A consent event of outcome
// "requested" carries its request's api.Consent while it waits.
//
// # Delivery
//
// Events are drained from the event outbox as the durable consumer
// "mqtt", in seq order, at QoS 1. The cursor moves only past events whose
// PUBACK came back, and it is committed in batches (Options.AckEvery events
// or Options.AckInterval, whichever comes first; and when a connection
// ends), never once per event: an SD card wears out. After an outage or a
// restart, publishing resumes after the last committed event, so a
// subscriber may see an event twice (de-duplicate by seq), never out of
// order and never not at all — unless the outbox bound (engine
// Options.OutboxMax) dropped node, quest or device events during a long
// outage: then seq has a gap, and the retained state topics carry the
// latest word. Verdict and consent events are never dropped.
//
// A slow broker never blocks the engine: the publisher reads the outbox at
// its own pace, with at most Options.Window events in flight; the engine
// only wakes it. What waits is in the store, not in memory.
//
// # Connection
//
// The client reconnects by itself with exponential back-off (from
// Options.ReconnectMin, doubling, with jitter, up to Options.ReconnectMax).
// The reconnect loop is this package's, around one paho client per
// connection, rather than paho's AutoReconnect: on reconnect, paho v1.5
// resends the publishes in flight and completes their tokens before their
// PUBACK arrives (messageIds.claimID), which would let the cursor move past
// an event the broker never acknowledged. Without it, a token completes
// only on PUBACK or with an error when the connection is lost, and the
// next connection starts again from the committed cursor.
//
// Every change of the connection is reported to Options.OnState (the box
// shows it; authentication, TLS and configuration errors are a fault, a
// broker that is down is not) and recorded as a device event (broker_up,
// broker_down), and logged once per distinct error.
//
// # Commands
//
// Off unless Options.Commands. Topics, each acted on only when received
// live (a retained command is logged and ignored, never acted on):
//
//	<base>/cmd/quest/<id>/stop      payload {}
//	<base>/cmd/quest/<id>/resume    payload {}
//	<base>/cmd/consent/<node>/approve  {"claim_hash": "<sha256 hex>"}  only with Options.Consent
//	<base>/cmd/consent/<node>/reject   {"claim_hash": "<sha256 hex>"}  only with Options.Consent
//
// Consent over MQTT is an L3 consent from source "mqtt", bound to the
// claim hash in the payload: a consent for another claim is void. An
// empty payload is no command and does nothing: it is how a retained
// command is cleared (an empty retained message, which the broker also
// forwards live), and what Tasmota treats as a query. Anything else under
// cmd/ is logged and ignored.
//
// # Home Assistant
//
// With Options.Discovery, the box announces itself under the discovery
// prefix (homeassistant/<component>/questbox_<device_id>/<object>/config,
// retained): sensors for active quests, pending consents, agent runs and
// agents running, binary sensors for awaiting consent (its attributes the
// consent queue of <base>/consent, the oldest request's why at the top)
// and the network,
// and event entities for verdicts and button presses, all with the
// availability topic <base>/status. It announces again, after a small
// random delay, when Home Assistant's birth message (<prefix>/status =
// online) arrives, and removes (empty retained config) the entities of
// this box that it no longer publishes — all of them when discovery is
// turned off.
package mqtt
