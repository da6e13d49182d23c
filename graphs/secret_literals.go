package graphs

import (
	"strings"

	"github.com/cairn-io/cairn/kinds"
)

// secretAttrs are, per kind, the spec fields whose value must come from
// a secret: the apply refuses one that does not (its value would sit in
// the package, the execution's history and the stack's record).
var secretAttrs = map[string][]string{
	"user": {"password"},
}

// warnLiteralSecrets warns of a secret field written as a literal, or as
// an expression that reads no secret, so that validate (offline and the
// API's) says so before an apply fails on it. Cost: O(fields checked).
func warnLiteralSecrets(cat *kinds.Catalogue, e *resourceEntry, c *collector) {
	kind := e.r.Kind
	if k, ok := cat.Lookup(kind); ok && k.Base != "" && k.Wrap == "" {
		kind = k.Base
	}
	for _, attr := range secretAttrs[strings.ToLower(kind)] {
		s, ok := e.r.Spec[attr].(string)
		if !ok || s == "" {
			continue // absent, or a {secretRef: …}
		}
		path := "spec." + attr
		switch {
		case !strings.Contains(s, "{{"):
			c.warn(e.pos(path, false), path, "%s is written in the package: give it as a secret ({secretRef: {key: KEY}} or {{ secret \"KEY\" }}); the apply refuses a literal", attr)
		case !strings.Contains(s, "secret"):
			c.warn(e.pos(path, false), path, "%s is an expression that reads no secret: give it as a secret ({secretRef: {key: KEY}} or {{ secret \"KEY\" }}); the apply refuses any other value", attr)
		}
	}
}
