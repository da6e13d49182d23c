// Package suggest finds the known name a mistyped one most likely meant,
// so every did-you-mean of Cairn (kinds, attributes, document fields, yaql
// functions) agrees.
package suggest

import "strings"

// Closest returns the candidate nearest to name by edit distance
// (case-insensitive, a transposition counts as one edit), or "" when none
// is within a typo's reach: 1 edit for short names, 2 up to 8 characters,
// 3 beyond. Names of two characters or fewer get no suggestion: any other
// short name is "one typo away".
func Closest(name string, candidates []string) string {
	if len(name) <= 2 {
		return ""
	}
	n := strings.ToLower(name)
	limit := 1
	switch {
	case len(n) > 8:
		limit = 3
	case len(n) > 4:
		limit = 2
	}
	best, bestDist := "", limit+1
	for _, c := range candidates {
		d := editDistance(n, strings.ToLower(c))
		if d < bestDist || (d == bestDist && best != "" && c < best) {
			best, bestDist = c, d
		}
	}
	if bestDist > limit {
		return ""
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and adjacent transpositions.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Names are short; cut long inputs so a hostile one costs little.
	if len(ra) > 64 {
		ra = ra[:64]
	}
	if len(rb) > 64 {
		rb = rb[:64]
	}
	if len(ra) == 0 {
		return len(rb)
	}
	if len(rb) == 0 {
		return len(ra)
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
