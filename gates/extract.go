package gates

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The contract's outer layer (docs/design.md, "Providers and the worker's
// answer"): the worker's answer is the LAST fenced ```json block of its
// output, or the whole output when it is one JSON object.
//
// Choices, written down:
//   - Fences follow CommonMark closely enough for agent output: an opening
//     fence is a line of three or more backticks (after any indentation)
//     followed by an info string; it closes at a line of at least as many
//     backticks and nothing but whitespace. Other fences (```python, plain ```)
//     are skipped as a whole, so a ```json line inside them opens nothing.
//     As in CommonMark, a line whose info string contains a backtick (inline
//     code such as ```json {}```) opens no fence.
//   - The info string's first word is matched case-insensitively: ```JSON and
//     ```Json count. Plain ``` does not: the contract asks for a json tag, and
//     the fact for "no json block" says how many untagged blocks were seen.
//   - Tilde fences (~~~) are not recognised.
//   - Lines may end in \n or \r\n; a JSON block cannot itself contain a fence
//     line, because JSON strings cannot hold raw newlines.
//   - A last ```json block that is never closed is a fact (the output was
//     probably cut), never silently read to the end.
//   - Without any ```json block, the whole answer (trimmed of whitespace and a
//     leading UTF-8 byte-order mark) is read as JSON if it starts with '{'.

// fenceOpen reports whether line opens a fence, with its backtick count and
// whether its info string is json.
func fenceOpen(line []byte) (n int, isJSON, ok bool) {
	t := trimIndent(line)
	n = countBackticks(t)
	if n < 3 {
		return 0, false, false
	}
	if bytes.IndexByte(t[n:], '`') >= 0 {
		return 0, false, false // inline code such as ```json {}```, not a fence
	}
	info := strings.Fields(string(t[n:]))
	return n, len(info) > 0 && strings.EqualFold(info[0], "json"), true
}

// fenceClose reports whether line closes a fence opened with n backticks.
func fenceClose(line []byte, n int) bool {
	t := trimIndent(line)
	m := countBackticks(t)
	return m >= n && len(bytes.TrimSpace(t[m:])) == 0
}

// trimIndent is bytes.TrimLeft(b, " \t"), without building a set of
// characters for each of the answer's lines.
func trimIndent(b []byte) []byte {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return b[i:]
}

func countBackticks(b []byte) int {
	n := 0
	for n < len(b) && b[n] == '`' {
		n++
	}
	return n
}

// block is one fenced block: content is raw[start:end]; line is 1-based.
type block struct {
	start, end int
	line       int
	closed     bool
}

// scanFences returns the last ```json block (if any) and how many other fenced
// blocks were seen.
func scanFences(raw []byte) (last block, found bool, others int) {
	if bytes.Index(raw, []byte("```")) < 0 {
		return last, false, 0 // no line can open a fence
	}
	return walkFences(raw)
}

// walkFences is scanFences line by line.
func walkFences(raw []byte) (last block, found bool, others int) {
	var (
		in     bool
		n      int
		isJSON bool
		cur    block
	)
	lineNo := 0
	for off := 0; off < len(raw); {
		end := bytes.IndexByte(raw[off:], '\n')
		next := len(raw)
		if end < 0 {
			end = len(raw)
		} else {
			end += off
			next = end + 1
		}
		line := bytes.TrimSuffix(raw[off:end], []byte("\r"))
		lineNo++
		switch {
		case !in:
			if k, j, ok := fenceOpen(line); ok {
				in, n, isJSON = true, k, j
				cur = block{start: next, line: lineNo}
			}
		case fenceClose(line, n):
			in = false
			if isJSON {
				cur.end, cur.closed = off, true
				last, found = cur, true
			} else {
				others++
			}
		}
		off = next
	}
	if in {
		if isJSON {
			cur.end = len(raw)
			last, found = cur, true
		} else {
			others++
		}
	}
	return last, found, others
}

// mayStartJSON reports whether c can begin a JSON value (a text starting
// with any other byte is not valid JSON).
func mayStartJSON(c byte) bool {
	return c == '{' || c == '[' || c == '"' || c == '-' || '0' <= c && c <= '9' || c == 't' || c == 'f' || c == 'n'
}

// answerStarts is the actual of a fact about an answer that is not JSON:
// how many fenced blocks without a json tag it has (if any), and how it
// starts, quoted as quoteExcerpt quotes. It is written into one buffer,
// so the fact costs one allocation.
func answerStarts(others int, trimmed []byte) string {
	var buf [160]byte // room for the longest printable-ASCII excerpt
	b := buf[:0]
	if others > 0 {
		b = strconv.AppendInt(b, int64(others), 10)
		b = append(b, " fenced block(s) without a json tag, and "...)
	}
	b = append(b, "the answer starts "...)
	return string(appendQuoteExcerpt(b, trimmed))
}

// locateJSON applies the outer layer of the contract. It returns the JSON text
// to parse, or adds a fact and returns ok=false.
func locateJSON(raw []byte, fs *factList) (text []byte, ok bool) {
	if len(raw) > MaxAnswerBytes {
		fs.add("answer", fmt.Sprintf("at most %d bytes", MaxAnswerBytes), fmt.Sprintf("%d bytes", len(raw)))
		return nil, false
	}
	last, found, others := scanFences(raw)
	if found {
		if !last.closed {
			fs.add("answer", "the ```json block opened at line "+itoa(last.line)+" to be closed by a ``` line",
				"no closing fence before the end of the answer")
			return nil, false
		}
		text = raw[last.start:last.end]
		if len(bytes.TrimSpace(text)) == 0 {
			fs.add("answer", "a JSON object in the ```json block at line "+itoa(last.line), "an empty block")
			return nil, false
		}
		return text, true
	}
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(raw), []byte("\uFEFF")))
	switch {
	case len(trimmed) == 0:
		fs.add("answer", "a ```json block or a JSON object", "an empty answer")
		return nil, false
	case trimmed[0] == '{':
		return trimmed, true
	case others > 0:
		fs.add("answer", "a ```json block or a JSON object", answerStarts(others, trimmed))
		return nil, false
	case mayStartJSON(trimmed[0]) && json.Valid(trimmed): // a scalar or an array: say so precisely
		fs.add("answer", "a JSON object", kindOf(trimmed)+" "+rawExcerpt(trimmed))
		return nil, false
	default:
		fs.add("answer", "a ```json block or a JSON object", answerStarts(0, trimmed))
		return nil, false
	}
}
