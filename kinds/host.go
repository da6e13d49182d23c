package kinds

import (
	"regexp"

	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/internal/nested"
)

// Host kinds: what a Puppet manifest manages on a host besides files.
const (
	KindFileLine = "file_line"
	KindPackage  = "package"
)

// hostKinds are the kinds that manage a host's packages and the lines of
// its configuration files, with Puppet's attribute names.
func hostKinds() []kindDef {
	return []kindDef{
		{Kind{
			Name: KindFileLine,
			Description: "a line present or absent in an existing file, matched by a regular expression (Puppet stdlib's file_line); " +
				"undo restores the file's previous bytes; not listable: export has no lines to list",
			Attributes: map[string]AttrKind{
				"path": Namevar, "ensure": Property, "line": Property,
				"match": Parameter, "match_for_absence": Parameter, "multiple": Parameter, "after": Parameter,
				"replace": Parameter, "append_on_no_match": Parameter, "replace_all_matches_not_matching_line": Parameter,
			},
			AutoEdges: []AutoEdge{{Kind: KindFile, From: "path", Attr: "path", Match: MatchEqual}},
		}, "file_line.json", fileLineRules},
		{Kind{
			Name: KindPackage,
			Description: "a Debian package (apt-get/dpkg) or an RPM (dnf/rpm): present, absent, latest or a version; " +
				"undo removes what the apply installed and reinstalls a version it changed (from the configured sources); " +
				"listed for export by dpkg-query or rpm -q",
			Attributes: map[string]AttrKind{
				"name": Namevar, "ensure": Property,
				// version is ensure's version (or latest) in canonical
				// form, compared with the installed one; not set directly.
				"version": Property,
			},
		}, "package.json", packageRules},
	}
}

// fileLineRules: line is required unless the lines to remove are named
// by match (stdlib's validate).
func fileLineRules(spec map[string]any, root string) []SpecError {
	if set(spec, "line") {
		return nil
	}
	if spec["ensure"] == "absent" && set(spec, "match") && (spec["match_for_absence"] == true || spec["match_for_absence"] == "true") {
		return nil
	}
	return []SpecError{{Path: root, Message: `"line" is required unless ensure is absent, match_for_absence is true and match is given`}}
}

// packageVersion is the form of a Debian version ([epoch:]upstream[-revision])
// or an RPM one ([epoch:]version[-release]); the provider checks the form of
// the host's package manager.
var packageVersion = regexp.MustCompile(`^([0-9]+:)?[0-9][A-Za-z0-9.+~^_-]*$`)

// packageRules: a version is given as ensure, as in Puppet.
func packageRules(spec map[string]any, root string) []SpecError {
	var errs []SpecError
	if set(spec, "version") {
		errs = append(errs, SpecError{Path: nested.Key(root, "version"), Message: `a version is given as ensure (ensure: "1.2-3")`})
	}
	e, ok := spec["ensure"].(string)
	if !ok || expr.IsDynamic(e) {
		return errs
	}
	switch e {
	case "present", "installed", "absent", "latest":
	default:
		if !packageVersion.MatchString(e) {
			errs = append(errs, SpecError{Path: nested.Key(root, "ensure"), Message: "want present, installed, absent, latest or a Debian or RPM version, got " + e})
		}
	}
	return errs
}
