package store

import (
	"errors"
	"testing"
)

type rec struct {
	A string
	B int
	C string
}

func codecs() (old, now *Codec[rec]) {
	a := Text("A", func(r *rec) *string { return &r.A })
	b := Int("B", func(r *rec) *int { return &r.B })
	c := Text("C", func(r *rec) *string { return &r.C })
	return NewCodec(a, b).ReadsLegacy(0x01, 1), NewCodec(a, b, c).ReadsLegacy(0x01, 1)
}

// A field added at the end reads back zero from records written before
// it; a record from a newer table is refused, never half read.
func TestCodecFieldsAddedAtTheEnd(t *testing.T) {
	old, now := codecs()
	var got rec
	if err := now.Decode(old.Append(nil, &rec{A: "a", B: 7}), &got); err != nil || got != (rec{A: "a", B: 7}) {
		t.Errorf("an older record: got %+v, %v; want {a 7 \"\"}", got, err)
	}
	if err := old.Decode(now.Append(nil, &rec{A: "a", B: 7, C: "c"}), &got); !errors.Is(err, ErrRecord) {
		t.Errorf("a newer record: got %+v, %v; want ErrRecord", got, err)
	}
	// The legacy form holds exactly its fields.
	if err := now.Decode([]byte{0x01, 1, 'x'}, &got); err != nil || got != (rec{A: "x"}) {
		t.Errorf("a legacy record: got %+v, %v", got, err)
	}
	full := now.Append(nil, &rec{A: "a", B: 7, C: "c"})
	for cut := range len(full) {
		if err := now.Decode(full[:cut], &got); !errors.Is(err, ErrRecord) {
			t.Errorf("cut at %d of %d: got %+v, %v; want ErrRecord", cut, len(full), got, err)
		}
	}
}
