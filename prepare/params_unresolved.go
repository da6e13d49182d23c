package prepare

import (
	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/model"
)

// UnresolvedRefs names the env ("env X") and secret ("secret X") refs of
// pkg that need a value (expr.Required) and have none from env or secret,
// the lookups a run of the package would resolve them with. Cost: one scan
// of every spec.
func UnresolvedRefs(pkg *model.Package, env, secret func(string) (string, bool)) []string {
	if pkg == nil {
		return nil
	}
	needEnv, needSecrets := expr.Required(pkg.Specs())
	var out []string
	for _, k := range needEnv {
		if _, ok := env(k); !ok {
			out = append(out, "env "+k)
		}
	}
	for _, k := range needSecrets {
		if _, ok := secret(k); !ok {
			out = append(out, "secret "+k)
		}
	}
	return out
}
