package expr

import (
	"maps"
	"slices"
	"strings"
	"text/template/parse"

	"github.com/cairn-io/cairn/internal/nested"
)

// Issue is a problem found in a spec without evaluating it: a malformed
// reference or a template that does not parse. Path is dotted with list
// indexes in brackets ("headers.Authorization", "argv[1]").
type Issue struct {
	Path    string
	Message string
}

// CheckSpec finds malformed references and unparsable templates anywhere
// in spec, every one of them, in path order.
func CheckSpec(spec map[string]any) []Issue {
	var issues []Issue
	for _, k := range slices.Sorted(maps.Keys(spec)) {
		checkValue(spec[k], k, &issues)
	}
	return issues
}

func checkValue(v any, path string, issues *[]Issue) {
	_ = nested.Walk(v, path, func(p nested.Path, v any) error {
		var err error
		switch x := v.(type) {
		case string:
			if err := Check(x); err != nil {
				*issues = append(*issues, Issue{Path: p.String(), Message: "invalid expression: " + err.Error()})
			}
			return nil
		case map[string]any:
			switch Classify(x) {
			case EnvRef:
				_, err = parseEnvRef(x[EnvRefKey])
			case SecretRef:
				_, err = parseSecretRef(x[SecretRefKey])
			default:
				return nil
			}
		default:
			return nil
		}
		if err != nil {
			*issues = append(*issues, Issue{Path: p.String(), Message: err.Error()})
		}
		return nested.SkipChildren
	})
}

// Scan discovers statically what spec refers to: env variables (envRef keys
// and env "KEY" calls), secrets (secretRef keys and secret "KEY" calls) and
// dependencies (.deps.NAME, dep "NAME" and index .deps "NAME"). Each list is
// sorted and unique; templates that do not parse are skipped (CheckSpec
// reports them).
func Scan(spec map[string]any) (env, secrets, deps []string) {
	s := scanner{env: stringSet{}, secrets: stringSet{}, deps: stringSet{}, vars: stringSet{}}
	for _, v := range spec {
		s.value(v)
	}
	return s.env.sorted(), s.secrets.sorted(), s.deps.sorted()
}

// Vars lists the variables spec's expressions read by a literal name
// (.vars.NAME, vars.NAME, index .vars "NAME"), sorted and unique: the
// values an apply must bring. A variable read at the top level (.NAME,
// a file template's form) is not seen.
func Vars(spec map[string]any) []string {
	s := scanner{env: stringSet{}, secrets: stringSet{}, deps: stringSet{}, vars: stringSet{}}
	for _, v := range spec {
		s.value(v)
	}
	return s.vars.sorted()
}

// Required is Scan's env and secret references without those that need
// no value: envRef with a default and env calls under `default`.
func Required(spec map[string]any) (env, secrets []string) {
	s := scanner{env: stringSet{}, secrets: stringSet{}, deps: stringSet{}, vars: stringSet{}, required: true}
	for _, v := range spec {
		s.value(v)
	}
	return s.env.sorted(), s.secrets.sorted()
}

// DepRef is a dependency an expression reads and the path of the value
// the expression sits in ("spec.headers.X").
type DepRef struct {
	Name string
	Path string
}

// ScanDeps is Scan's dependencies with their paths, in path order, each
// as often as it is read. Top-level keys for which skip reports true are
// left out (attributes that are templates of their own); envRef and
// secretRef values hold no expression.
func ScanDeps(spec map[string]any, prefix string, skip func(key string) bool) []DepRef {
	var out []DepRef
	visit := func(p nested.Path, v any) error {
		switch x := v.(type) {
		case string:
			if !IsTemplate(x) {
				return nil
			}
			_, _, deps := ScanString(x)
			for _, d := range deps {
				out = append(out, DepRef{Name: d, Path: p.String()})
			}
		case map[string]any:
			if Classify(x) != Literal {
				return nested.SkipChildren
			}
		}
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(spec)) {
		if skip == nil || !skip(k) {
			_ = nested.Walk(spec[k], nested.Key(prefix, k), visit)
		}
	}
	return out
}

// ScanString is Scan for one template string or condition source.
func ScanString(src string) (env, secrets, deps []string) {
	s := scanner{env: stringSet{}, secrets: stringSet{}, deps: stringSet{}, vars: stringSet{}}
	s.template(src)
	return s.env.sorted(), s.secrets.sorted(), s.deps.sorted()
}

// ScanCondition is Scan for a condition's source, a bare pipeline or a
// template (see Condition).
func ScanCondition(src string) (env, secrets, deps []string) {
	src = strings.TrimSpace(src)
	if src == "" {
		return nil, nil, nil
	}
	return ScanString(conditionSource(src))
}

type scanner struct {
	env, secrets, deps, vars stringSet
	// required leaves out references that have a default.
	required bool
}

func (s *scanner) value(v any) {
	_ = nested.Walk(v, "", s.visit)
}

func (s *scanner) visit(_ nested.Path, v any) error {
	switch x := v.(type) {
	case string:
		s.template(x)
	case map[string]any:
		switch Classify(x) {
		case EnvRef:
			if r, err := parseEnvRef(x[EnvRefKey]); err == nil && !(s.required && r.HasDefault) {
				s.env.add(r.Key)
			}
			return nested.SkipChildren
		case SecretRef:
			if k, err := parseSecretRef(x[SecretRefKey]); err == nil {
				s.secrets.add(k)
			}
			return nested.SkipChildren
		}
	}
	return nil
}

func (s *scanner) template(src string) {
	if !IsTemplate(src) {
		return
	}
	tree, err := parseTree(src, staticNames())
	if err != nil {
		return
	}
	var optional stringSet
	if s.required {
		optional = optionalEnvKeys(tree.Root)
	}
	walk(tree.Root, func(n parse.Node) {
		switch x := n.(type) {
		case *parse.CommandNode:
			if k, ok := literalCall(x, "env"); ok {
				if _, skip := optional[k]; !skip {
					s.env.add(k)
				}
			}
			if k, ok := literalCall(x, "secret"); ok {
				s.secrets.add(k)
			}
			if k, ok := literalCall(x, "dep"); ok {
				s.deps.add(k)
			}
			// index .deps "NAME", index .vars "NAME"
			if isCall(x, "index") && len(x.Args) >= 3 {
				if f, ok := x.Args[1].(*parse.FieldNode); ok && len(f.Ident) == 1 {
					if str, ok := x.Args[2].(*parse.StringNode); ok {
						s.root(f.Ident[0], str.Text)
					}
				}
			}
		case *parse.FieldNode:
			if len(x.Ident) >= 2 {
				s.root(x.Ident[0], x.Ident[1])
			}
		case *parse.ChainNode:
			// deps.NAME, vars.NAME: the functions' spelling
			if id, ok := x.Node.(*parse.IdentifierNode); ok && len(x.Field) >= 1 {
				s.root(id.Ident, x.Field[0])
			}
		}
	})
}

// root notes a read of a name under deps or vars.
func (s *scanner) root(under, name string) {
	switch under {
	case "deps":
		s.deps.add(name)
	case "vars":
		s.vars.add(name)
	}
}
