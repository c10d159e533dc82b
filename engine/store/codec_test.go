package store

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

type rec struct {
	Name  string
	N     int
	At    time.Time
	Tags  []string
	Added uint64
}

func fieldsOf(n int) []Field[rec] {
	all := []Field[rec]{
		Text("Name", func(r *rec) *string { return &r.Name }),
		Int("N", func(r *rec) *int { return &r.N }),
		Time("At", func(r *rec) *time.Time { return &r.At }),
		Texts("Tags", func(r *rec) *[]string { return &r.Tags }, true),
		Uint("Added", func(r *rec) *uint64 { return &r.Added }),
	}
	return all[:n]
}

// A field added at the end of the table: records written before it read
// with it zero, and records written with it read back whole; a build that
// does not know it refuses its records rather than drop the field.
func TestCodecFieldAddedAtTheEnd(t *testing.T) {
	old, cur := NewCodec(2, fieldsOf(4)...), NewCodec(2, fieldsOf(5)...)
	r := rec{Name: "q1", N: -7, At: time.Unix(1e9, 5).UTC(), Tags: []string{"a", "b"}, Added: 9}
	var got rec
	if err := cur.Decode(old.Append(nil, &r), &got); err != nil {
		t.Fatal(err)
	}
	want := r
	want.Added = 0
	if !reflect.DeepEqual(got, want) {
		t.Errorf("an older record reads back %+v, want %+v", got, want)
	}
	if err := cur.Decode(cur.Append(nil, &r), &got); err != nil || !reflect.DeepEqual(got, r) {
		t.Errorf("a record reads back %+v, %v; want %+v", got, err, r)
	}
	if err := old.Decode(cur.Append(nil, &r), &got); !errors.Is(err, ErrRecord) {
		t.Errorf("a newer record in an older build: %v, want ErrRecord", err)
	}
}

// Every cut of a record, and a byte past its end, is ErrRecord.
func TestCodecDamageIsAnError(t *testing.T) {
	c := NewCodec(2, fieldsOf(5)...)
	raw := c.Append(nil, &rec{Name: "q1", N: 3, At: time.Unix(1e9, 0).UTC(), Tags: []string{"x"}, Added: 1})
	for cut := range len(raw) {
		if err := c.Decode(raw[:cut], new(rec)); !errors.Is(err, ErrRecord) {
			t.Errorf("cut at %d of %d: %v, want ErrRecord", cut, len(raw), err)
		}
	}
	if err := c.Decode(append(raw, 0), new(rec)); !errors.Is(err, ErrRecord) {
		t.Errorf("a byte past the end: %v, want ErrRecord", err)
	}
}

// A legacy form (no count) reads its fixed fields.
func TestCodecLegacyForm(t *testing.T) {
	c := NewCodec(2, fieldsOf(5)...).WithLegacy(1, 2)
	raw := []byte{1, 2, 'q', '1', 6} // "q1", N=3 (zigzag 6)
	var got rec
	if err := c.Decode(raw, &got); err != nil || got.Name != "q1" || got.N != 3 || got.Added != 0 {
		t.Errorf("legacy record: %+v, %v", got, err)
	}
}
