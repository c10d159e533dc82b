package api

// Source is where a command came from: a quest stopped or resumed records
// it in its reason ("stopped via mqtt"). A door says where its commands
// come from (Options.Source); a request may name its own (QuestCommand).
type Source string

// The sources of a command (engine.Sources; a test pins that they agree).
const (
	SourceCLI       Source = "cli"       // the control socket and the in-process door
	SourceDashboard Source = "dashboard" // the dashboard's door
	SourceMQTT      Source = "mqtt"      // an MQTT command topic
)

// QuestCommand is the optional JSON body of POST /api/quests/{id}/stop and
// /resume. An empty body, {} and a Source of "" all take the door's
// Options.Source.
type QuestCommand struct {
	// Source names where the command came from; the MQTT face sets
	// SourceMQTT, whichever door it calls through.
	Source Source `json:"source,omitempty"`
}
