package testenv

import "bytes"

// YAMLLines counts the lines of data as YAML does: LF, CR and CR LF end a
// line, and so do NEL, LS and PS. It is the tests' own count, kept apart
// from the parsers it checks.
func YAMLLines(data []byte) int {
	n := 1
	for i := 0; i < len(data); i++ {
		switch {
		case data[i] == '\n':
			n++
		case data[i] == '\r':
			if i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
			n++
		case bytes.HasPrefix(data[i:], []byte("\u0085")), bytes.HasPrefix(data[i:], []byte("\u2028")), bytes.HasPrefix(data[i:], []byte("\u2029")):
			n++
		}
	}
	return n
}
