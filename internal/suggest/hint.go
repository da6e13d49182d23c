package suggest

import "strconv"

// Hint is the did-you-mean every message about an unknown name ends with:
// `; did you mean "x"?` for the candidate Closest finds, or "" when none is
// close. It costs one Closest.
func Hint(name string, candidates []string) string {
	return Mean(Closest(name, candidates))
}

// Mean words a suggestion already found (by Closest or a catalogue's own
// search) the way Hint does: `; did you mean "x"?`, or "" for no
// suggestion.
func Mean(suggestion string) string {
	if suggestion == "" {
		return ""
	}
	return "; did you mean " + strconv.Quote(suggestion) + "?"
}
