package kinds

// DepAliasAttr is the attribute of a kind whose Aliases is set: an
// object of alias → resource name (Deployster's dependencies), each an
// ordering edge whose applied state expressions read as .deps.ALIAS.
const DepAliasAttr = "dependencies"

// DepAliases reads a spec's dependency aliases (alias → resource name as
// written, "Kind/name" or a bare name); nil when it has none. Values that
// are not names are left out: the kind's schema reports them.
func DepAliases(spec map[string]any) map[string]string {
	m, ok := spec[DepAliasAttr].(map[string]any)
	if !ok || len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for alias, v := range m {
		if name, ok := v.(string); ok && name != "" {
			out[alias] = name
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
