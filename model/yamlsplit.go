package model

import "bytes"

// YAMLChunk is a run of a YAML stream that holds whole documents: its
// bytes and where they start in the stream (byte offset and 1-based
// line).
type YAMLChunk struct {
	Data   []byte
	Offset int
	Line   int
}

// SplitYAML cuts a YAML stream before each document marker ("---" at the
// start of a line, followed by a space, a tab or the end of the line; lines
// end as YAML ends them, at LF, CR, CR LF, NEL, LS or PS),
// so that each chunk but the first starts with its marker. YAML forbids
// such a line inside a value (a quoted or plain scalar ends there, and so
// does a block scalar), so a cut never falls inside one; directives
// (%YAML, %TAG) written after a document end ("...") go with the document
// they precede. Each chunk holds one document, except that the first may
// hold none (comments only) and a chunk may hold several when documents
// are separated by "..." alone. Decoding the chunks one by one reads what
// decoding the whole stream reads, and no chunk needs another. Cost: one
// pass over the bytes; the chunks share data's memory. The reader of
// documents (one document's limits at a time) and the client that cuts a
// large package into parts both cut here.
func SplitYAML(data []byte, yield func(YAMLChunk) bool) {
	start, startLine := 0, 1
	// pending is where directives after a document end begin: the next
	// document starts there rather than at its marker.
	pending, pendingLine := -1, 0
	afterEnd := true // at the start of the stream, directives may come
	line := 1
	for off := 0; off < len(data); {
		end, next := lineEnd(data, off)
		l := data[off:end]
		switch {
		case marker(l, '-'):
			cut, cutLine := off, line
			if pending >= 0 {
				cut, cutLine = pending, pendingLine
			}
			if cut > start {
				if !yield(YAMLChunk{Data: data[start:cut], Offset: start, Line: startLine}) {
					return
				}
				start, startLine = cut, cutLine
			}
			pending, afterEnd = -1, false
		case marker(l, '.'):
			pending, afterEnd = -1, true
		case len(l) > 0 && l[0] == '%':
			if afterEnd && pending < 0 {
				pending, pendingLine = off, line
			}
		case blankOrComment(l):
		default:
			pending, afterEnd = -1, false
		}
		off = next
		line++
	}
	if start < len(data) {
		yield(YAMLChunk{Data: data[start:], Offset: start, Line: startLine})
	}
}

// lineEnd finds the end of the line starting at off and where the next
// begins, with YAML's line breaks: LF, CR, CR LF, and NEL, LS and PS.
func lineEnd(data []byte, off int) (end, next int) {
	for i := off; i < len(data); i++ {
		switch data[i] {
		case '\n':
			return i, i + 1
		case '\r':
			if i+1 < len(data) && data[i+1] == '\n' {
				return i, i + 2
			}
			return i, i + 1
		case 0xC2: // NEL, U+0085
			if i+1 < len(data) && data[i+1] == 0x85 {
				return i, i + 2
			}
		case 0xE2: // LS and PS, U+2028 and U+2029
			if i+2 < len(data) && data[i+1] == 0x80 && (data[i+2] == 0xA8 || data[i+2] == 0xA9) {
				return i, i + 3
			}
		}
	}
	return len(data), len(data)
}

// marker reports whether line (without its break) starts with three c
// ("---" or "...") followed by white space or its end.
func marker(line []byte, c byte) bool {
	if len(line) < 3 || line[0] != c || line[1] != c || line[2] != c {
		return false
	}
	return len(line) == 3 || line[3] == ' ' || line[3] == '\t'
}

// blankOrComment reports whether a line holds nothing but white space or
// a comment.
func blankOrComment(line []byte) bool {
	t := bytes.TrimLeft(line, " \t")
	return len(t) == 0 || t[0] == '#'
}
