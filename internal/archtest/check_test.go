package archtest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// module is the import path of the Cairn module.
const module = "github.com/cairn-io/cairn"

// rule forbids every package matching from (and no pattern of unless) to
// import a package matching forbid (and no pattern of allow); why says what
// the rule protects, and is reported with each violation.
type rule struct {
	from   []string
	unless []string
	forbid []string
	allow  []string
	why    string
}

// edge is one import: from imports to. Cairn packages are named by their
// path inside the module, outside packages by their full path.
type edge struct{ from, to string }

func (e edge) String() string { return e.from + " -> " + e.to }

// violation is an edge a rule forbids.
type violation struct {
	edge
	why string
}

func (v violation) String() string { return fmt.Sprintf("%s: %s", v.edge, v.why) }

// relative names a package the way patterns do: a Cairn package by its
// path inside the module ("." for the module root), any other by its full
// path; cairn reports which it is.
func relative(path string) (name string, cairn bool) {
	if path == module {
		return ".", true
	}
	if rest, ok := strings.CutPrefix(path, module+"/"); ok {
		return rest, true
	}
	return path, false
}

// matches reports whether the package matches pattern.
func matches(pattern, name string, cairn bool) bool {
	patternCairn := !strings.Contains(strings.SplitN(pattern, "/", 2)[0], ".")
	if pattern == "*" {
		return cairn
	}
	if patternCairn != cairn {
		return false
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return name == base || strings.HasPrefix(name, base+"/")
	}
	return name == pattern
}

func matchesAny(patterns []string, name string, cairn bool) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return matches(p, name, cairn) })
}

// check returns every edge of imports (each Cairn package's full import
// path to the full paths it imports) that a rule forbids, sorted, one per
// edge and rule. A package's import of itself cannot happen and is not
// looked at.
func check(rules []rule, imports map[string][]string) []violation {
	var out []violation
	for _, from := range slices.Sorted(maps.Keys(imports)) {
		fname, fcairn := relative(from)
		if !fcairn {
			continue
		}
		for _, to := range imports[from] {
			tname, tcairn := relative(to)
			for _, r := range rules {
				if !matchesAny(r.from, fname, true) || matchesAny(r.unless, fname, true) {
					continue
				}
				if matchesAny(r.forbid, tname, tcairn) && !matchesAny(r.allow, tname, tcairn) {
					out = append(out, violation{edge{fname, tname}, r.why})
				}
			}
		}
	}
	slices.SortStableFunc(out, func(a, b violation) int { return strings.Compare(a.edge.String(), b.edge.String()) })
	return out
}
