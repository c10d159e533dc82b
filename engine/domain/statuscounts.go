package domain

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// StatusCounts is the number of a quest's nodes per status (Quest.Counts):
// one count per status, indexed by the status's place in Statuses, so
// that copying a quest copies its counts (a tick copies each of a thousand
// cached quests: cloning a map per quest was a tenth of its work) and a
// move is two array writes.
//
// It reads, writes and marshals as the map of statuses to counts it
// replaced (map[Status]int), whose zero value was nil: a status is
// present when its count is not zero (every move deleted a count it took
// to zero), and the zero StatusCounts is that nil map (its record's 0,
// JSON's null) until made (adoptQuest, NewQuest) or counted into.
type StatusCounts struct {
	n    [nStatus]int32
	made bool
}

// nStatus is the number of statuses (len(Statuses)).
const nStatus = 13

// statusIndex is s's place in Statuses; ok is false for a status this
// questbox does not know.
func statusIndex(s Status) (i int, ok bool) {
	switch s {
	case Proposed:
		return 0, true
	case Pending:
		return 1, true
	case Running:
		return 2, true
	case Deferred:
		return 3, true
	case AwaitingConsent:
		return 4, true
	case Passed:
		return 5, true
	case Explored:
		return 6, true
	case Growing:
		return 7, true
	case Aborted:
		return 8, true
	case Exhausted:
		return 9, true
	case CouncilPending:
		return 10, true
	case Revising:
		return 11, true
	case TeamBlocked:
		return 12, true
	}
	return 0, false
}

// byName is the statuses' places in the order of their names: the order
// of the map's keys in its record (store.Counts) and in JSON.
var byName = func() [nStatus]uint8 {
	var o [nStatus]uint8
	for i := range o {
		o[i] = uint8(i)
	}
	slices.SortFunc(o[:], func(a, b uint8) int { return strings.Compare(string(Statuses[a]), string(Statuses[b])) })
	return o
}()

// CountsOf returns the counts of m (a test's or a literal's).
func CountsOf(m map[Status]int) StatusCounts {
	var c StatusCounts
	if m == nil {
		return c
	}
	c.made = true
	for s, n := range m {
		c.Add(s, n)
	}
	return c
}

// Get is the number of nodes in status s, 0 for a status not known.
func (c *StatusCounts) Get(s Status) int {
	if i, ok := statusIndex(s); ok {
		return int(c.n[i])
	}
	return 0
}

// Add adds d to the count of s, which must be a status this questbox
// knows (a node's status is checked where a record may bring another:
// plant, salvage).
func (c *StatusCounts) Add(s Status, d int) {
	i := slot(s)
	c.n[i] += int32(d)
	c.made = true
}

// Inc counts one more node in status s.
func (c *StatusCounts) Inc(s Status) { c.Add(s, 1) }

// Dec counts one node fewer in status s; a count never goes below zero
// (the map's entry was deleted when it did).
func (c *StatusCounts) Dec(s Status) {
	i := slot(s)
	c.n[i] = max(c.n[i]-1, 0)
	c.made = true
}

// slot is s's place in Statuses, s a status this questbox knows.
func slot(s Status) int {
	i, ok := statusIndex(s)
	if !ok {
		panic(fmt.Sprintf("engine: counting a node of unknown status %q", s))
	}
	return i
}

// Total is the number of nodes, all statuses together.
func (c *StatusCounts) Total() int {
	n := 0
	for _, k := range c.n {
		n += int(k)
	}
	return n
}

// Len is the number of statuses counted (not zero), -1 when the counts
// were never made (a nil map's).
func (c *StatusCounts) Len() int {
	if !c.made {
		return -1
	}
	n := 0
	for _, k := range c.n {
		if k != 0 {
			n++
		}
	}
	return n
}

// Entry is the i-th status in the order of their names and its count
// (store.Tally).
func (c *StatusCounts) Entry(i int) (string, int) {
	return string(Statuses[byName[i]]), int(c.n[byName[i]])
}

// Slots is the number of statuses (store.Tally).
func (c *StatusCounts) Slots() int { return nStatus }

// Set sets the count of the status named name, read from a record: a
// name this questbox does not know is an error (a damaged store, or a
// newer questbox's), never dropped.
func (c *StatusCounts) Set(name string, n int64) error {
	i, ok := statusIndex(Status(name))
	if !ok {
		return fmt.Errorf("unknown node status %q", name)
	}
	if int64(int32(n)) != n {
		return fmt.Errorf("count %d of status %s out of range", n, name)
	}
	c.n[i], c.made = int32(n), true
	return nil
}

// Make sets the counts to none made (an empty map's, not a nil one's).
func (c *StatusCounts) Make() { *c = StatusCounts{made: true} }

// String is the counts as fmt prints a map: map[pending:2 running:1].
func (c StatusCounts) String() string {
	var b strings.Builder
	b.WriteString("map[")
	sep := ""
	for i := range nStatus {
		if s, n := c.Entry(i); n != 0 {
			fmt.Fprintf(&b, "%s%s:%d", sep, s, n)
			sep = " "
		}
	}
	b.WriteString("]")
	return b.String()
}

// MarshalJSON writes the counts as the map did: null, or an object of the
// statuses counted, in the order of their names.
func (c StatusCounts) MarshalJSON() ([]byte, error) {
	if !c.made {
		return []byte("null"), nil
	}
	b := []byte{'{'}
	for i := range nStatus {
		if s, n := c.Entry(i); n != 0 {
			if len(b) > 1 {
				b = append(b, ',')
			}
			b = strconv.AppendQuote(b, s)
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(n), 10)
		}
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads the map's form (a quest record before schema 4).
func (c *StatusCounts) UnmarshalJSON(raw []byte) error {
	var m map[string]int64
	if err := json.Unmarshal(raw, &m); err != nil {
		return err
	}
	*c = StatusCounts{}
	if m == nil {
		return nil
	}
	c.made = true
	for name, n := range m {
		if err := c.Set(name, n); err != nil {
			return err
		}
	}
	return nil
}

// EmptyCounts are the counts of a quest with no nodes yet: an empty
// map's, not a nil one's.
func EmptyCounts() StatusCounts { return StatusCounts{made: true} }

// MarkMade makes the counts an empty map's rather than a nil one's when
// they hold none, and changes no count.
func (c *StatusCounts) MarkMade() { c.made = true }
