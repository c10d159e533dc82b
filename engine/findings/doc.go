// Package findings is what a quest found, for people (docs/results.md):
// which locked nodes count as findings and of what kind, which gate
// verdict and which person let each lock, the nodes locked without one,
// and how the quest ended or why it rests. The API's result view,
// `status` of a finished quest and the dashboard read these rules, once;
// an export stays the machine's record of every locked node.
package findings
