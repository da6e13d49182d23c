package graphs

import (
	"maps"
	"slices"

	"github.com/cairn-io/cairn/expr"
)

// RequiredRefs lists the env refs and secrets d's package needs a value
// for (expr.Required: references without a default), sorted and unique.
// Cost: one scan of every resource's spec.
func (d *Documents) RequiredRefs() (env, secrets []string) {
	if d == nil || d.Package == nil {
		return nil, nil
	}
	return expr.Required(d.Package.Specs())
}

// MissingVars lists the variables d's package reads by name (.vars.NAME,
// vars.NAME) that vars does not give, sorted and unique: what an apply is
// refused for. A kind's verbatim attributes are templates of their own,
// rendered with the resource's vars (a file's template), and are skipped.
func (d *Documents) MissingVars(vars map[string]any) []string {
	if d == nil || d.Package == nil {
		return nil
	}
	missing := map[string]bool{}
	for _, r := range d.Package.Resources {
		spec := r.Spec
		if d.Catalogue != nil {
			if k, ok := d.Catalogue.Lookup(r.Kind); ok && len(k.Verbatim) > 0 {
				spec = maps.Clone(spec)
				for _, key := range k.Verbatim {
					delete(spec, key)
				}
			}
		}
		for _, k := range expr.Vars(spec) {
			if _, ok := vars[k]; !ok {
				missing[k] = true
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(missing))
}
