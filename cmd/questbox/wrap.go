package main

import (
	"strings"
	"unicode"

	"golang.org/x/text/width"
)

// wrapText breaks one paragraph (no newline) into lines of at most cols
// terminal columns: its first line starts with first, the others with
// cont. It breaks at spaces; a word longer than a line (a URL, a run of
// CJK text) is broken where the line ends. A tab counts as a space. East
// Asian wide characters take two columns, combining marks none.
func wrapText(text string, cols int, first, cont string) []string {
	var (
		lines  []string
		line   strings.Builder
		used   int
		prefix = first
	)
	start := func() {
		line.Reset()
		line.WriteString(prefix)
		used = runesWidth(prefix)
		prefix = cont
	}
	flush := func() {
		lines = append(lines, strings.TrimRight(line.String(), " "))
		start()
	}
	start()
	fresh := true // nothing but the prefix on the line yet
	for _, word := range strings.Fields(strings.ReplaceAll(text, "\t", " ")) {
		ww := runesWidth(word)
		if !fresh && used+1+ww > cols {
			flush()
			fresh = true
		}
		if !fresh {
			line.WriteByte(' ')
			used++
		}
		for _, r := range word {
			rw := runeWidth(r)
			if used+rw > cols && used > runesWidth(cont) {
				flush()
			}
			line.WriteRune(r)
			used += rw
		}
		fresh = false
	}
	if !fresh || len(lines) == 0 {
		lines = append(lines, strings.TrimRight(line.String(), " "))
	}
	return lines
}

// runeWidth is the columns r takes on a terminal.
func runeWidth(r rune) int {
	switch {
	case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r):
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

func runesWidth(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}
