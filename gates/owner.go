package gates

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The actions an owner node may take (team mode).
const (
	ActionPromote = "promote" // move proposed node Node to pending
	ActionAbort   = "abort"   // stop node Node, saying why in Reason
	ActionSpawn   = "spawn"   // propose a new node with Hypothesis and Role
	ActionFinish  = "finish"  // end the quest with Summary
)

// actionSet is shown in facts about an unknown action.
const actionSet = ActionPromote + "|" + ActionAbort + "|" + ActionSpawn + "|" + ActionFinish

// Action is one decision of an owner node. Which fields are required depends on
// Action; see [OwnerAnswer]. Fields that do not apply to the action must be
// absent (empty), so a misplaced field never passes silently.
type Action struct {
	Action     string `json:"action"`
	Node       string `json:"node,omitempty"`
	Reason     string `json:"reason,omitempty"`
	Hypothesis string `json:"hypothesis,omitempty"`
	Role       string `json:"role,omitempty"`
	Summary    string `json:"summary,omitempty"`
}

// OwnerAnswer is an owner node's answer (role "owner", team mode):
//
//	{"evidence": "why", "actions": [
//	  {"action":"promote","node":"n4"},
//	  {"action":"abort","node":"n5","reason":"duplicate of n4"},
//	  {"action":"spawn","hypothesis":"try X","role":"poc"},
//	  {"action":"finish","summary":"best answer is ..."}]}
//
// Per action, required (non-blank) and optional fields:
//
//	promote  node                      optional: reason
//	abort    node, reason
//	spawn    hypothesis, role          optional: reason
//	finish   summary                   optional: reason
//
// There is at least one action and at most [MaxListItems]; at most one finish;
// a node is promoted or aborted at most once. Roles are not checked against a
// list here (they are extensible); the engine checks them, and whether nodes
// exist.
type OwnerAnswer struct {
	Evidence string   `json:"evidence"`
	Actions  []Action `json:"actions"`
}

func ownerFields() []fieldSpec {
	return []fieldSpec{
		{name: "evidence", kind: "string", required: true},
		{name: "actions", kind: "array", required: true},
	}
}

// actionFields returns the members allowed for an action kind, or nil for an
// unknown kind.
func actionFields(kind string) []fieldSpec {
	a := fieldSpec{name: "action", kind: "string", required: true}
	reason := fieldSpec{name: "reason", kind: "string"}
	switch kind {
	case ActionPromote:
		return []fieldSpec{a, {name: "node", kind: "string", required: true}, reason}
	case ActionAbort:
		reason.required = true
		return []fieldSpec{a, {name: "node", kind: "string", required: true}, reason}
	case ActionSpawn:
		return []fieldSpec{a, {name: "hypothesis", kind: "string", required: true},
			{name: "role", kind: "string", required: true}, reason}
	case ActionFinish:
		return []fieldSpec{a, {name: "summary", kind: "string", required: true}, reason}
	}
	return nil
}

// allActionFields lists every member any action may have, for unknown kinds.
func allActionFields() []fieldSpec {
	return []fieldSpec{{name: "action"}, {name: "node"}, {name: "reason"},
		{name: "hypothesis"}, {name: "role"}, {name: "summary"}}
}

// ParseOwnerAnswer reads an owner's answer with the same outer rules and the
// same strictness as [ParseAnswer]: facts are empty if and only if the answer
// is valid, and the OwnerAnswer is the zero value otherwise. It never panics.
func ParseOwnerAnswer(raw []byte) (OwnerAnswer, []Fact) {
	var fs factList
	text, ok := locateJSON(raw, &fs)
	if !ok {
		return OwnerAnswer{}, fs.facts()
	}
	objRaw, ok := parseObjectText(text, &fs)
	if !ok {
		return OwnerAnswer{}, fs.facts()
	}
	obj, ok := decodeObject(objRaw, "", &fs)
	if !ok {
		return OwnerAnswer{}, fs.facts()
	}
	checkMembers(obj, "", ownerFields(), &fs)
	checkKindMember(obj, "", "evidence", "string", &fs)
	if items, ok := arrayMember(obj, "", "actions", &fs); ok {
		if len(items) == 0 {
			fs.add("actions", "at least one action", "[]")
		}
		for i, item := range items {
			checkActionJSON(item, index("actions", i), &fs)
		}
	}
	if !fs.empty() {
		return OwnerAnswer{}, fs.facts()
	}
	var o OwnerAnswer
	if err := strictDecode(objRaw, &o); err != nil {
		fs.add("answer", "an answer the strict decoder accepts", oneLine(clip(err.Error(), 200)))
		return OwnerAnswer{}, fs.facts()
	}
	if f := o.Validate(); len(f) > 0 {
		return OwnerAnswer{}, f
	}
	return o, nil
}

// checkActionJSON checks one element of "actions" at the JSON level.
func checkActionJSON(raw json.RawMessage, where string, fs *factList) {
	obj, ok := objectValue(raw, where, fs)
	if !ok {
		return
	}
	kindRaw, present := obj.get("action")
	if !present {
		checkMembers(obj, where, allActionFields(), fs)
		fs.add(path(where, "action"), "field \"action\" (string): one of "+actionSet, "missing")
		return
	}
	kind, ok := stringValue(kindRaw, path(where, "action"), fs)
	if !ok {
		return
	}
	specs := actionFields(kind)
	if specs == nil {
		fs.add(path(where, "action"), "one of "+actionSet, quoteExcerpt(kind))
		return
	}
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.name
	}
	for i, f := range obj.fields {
		switch {
		case obj.index[f.name] != i || hasName(specs, f.name):
			// a duplicate (already reported) or an allowed member
		case hasName(allActionFields(), f.name):
			// A member of another action kind gets a clearer fact than "unknown".
			fs.add(path(where, f.name), "no "+f.name+" for a "+kind+" action", f.name+" "+describe(f.value))
		default:
			actual := "unknown field " + quoteExcerpt(f.name)
			if c := closest(f.name, names); c != "" {
				actual += fmt.Sprintf(" (did you mean %q?)", c)
			}
			fs.add(path(where, f.name), "only the fields "+strings.Join(names, ", "), actual)
		}
	}
	for _, s := range specs {
		if _, ok := obj.index[s.name]; s.required && !ok {
			fs.add(path(where, s.name), fmt.Sprintf("field %q (%s) for a %s action", s.name, s.kind, kind), "missing")
		}
	}
	for _, s := range specs[1:] {
		if v, ok := stringMember(obj, where, s.name, fs); ok && (s.required || v != "") {
			checkNotBlank(v, path(where, s.name), fs)
		}
	}
}

// Validate checks the values of o (not its JSON shape): at least one and at most
// [MaxListItems] actions, each a known action with its required fields
// non-blank and no fields that do not apply, at most one finish, and no node
// promoted or aborted twice. It returns nil when o is valid; [ParseOwnerAnswer]
// already applies it.
func (o OwnerAnswer) Validate() []Fact {
	var fs factList
	if len(o.Actions) == 0 {
		fs.add("actions", "at least one action", "[]")
	}
	checkLen("actions", len(o.Actions), &fs)
	nodes := map[string]int{}
	finish := -1
	for i, a := range o.Actions {
		where := index("actions", i)
		specs := actionFields(a.Action)
		if specs == nil {
			fs.add(path(where, "action"), "one of "+actionSet, quoteExcerpt(a.Action))
			continue
		}
		vals := map[string]string{"node": a.Node, "reason": a.Reason,
			"hypothesis": a.Hypothesis, "role": a.Role, "summary": a.Summary}
		for _, name := range []string{"node", "reason", "hypothesis", "role", "summary"} {
			v := vals[name]
			switch {
			case !hasName(specs, name):
				if v != "" {
					fs.add(path(where, name), "no "+name+" for a "+a.Action+" action", name+" "+quoteExcerpt(v))
				}
			case requiredIn(specs, name) || v != "":
				checkNotBlank(v, path(where, name), &fs)
			}
		}
		switch a.Action {
		case ActionPromote, ActionAbort:
			key := strings.TrimSpace(a.Node)
			if key == "" {
				break
			}
			if j, dup := nodes[key]; dup {
				fs.add(path(where, "node"), "each node promoted or aborted at most once",
					fmt.Sprintf("node %s already in actions[%d]", quoteExcerpt(a.Node), j))
			} else {
				nodes[key] = i
			}
		case ActionFinish:
			if finish >= 0 {
				fs.add(path(where, "action"), "at most one finish action",
					fmt.Sprintf("another finish after actions[%d]", finish))
			} else {
				finish = i
			}
		}
	}
	return fs.facts()
}

func requiredIn(specs []fieldSpec, name string) bool {
	for _, s := range specs {
		if s.name == name {
			return s.required
		}
	}
	return false
}
