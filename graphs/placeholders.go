package graphs

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/internal/suggest"
	"github.com/cairn-io/cairn/model"
)

// Fuel's placeholders: {NAME} in a task's parameters and in its test_pre
// and test_post commands, replaced by the cluster's values when the graph
// is expanded for an execution (Fuel's tasks_templates). {SETTINGS.a.b}
// reads the cluster's settings tree at a dotted path.
const (
	PlaceholderClusterID        = "CLUSTER_ID"
	PlaceholderMasterIP         = "MASTER_IP"
	PlaceholderOpenstackVersion = "OPENSTACK_VERSION"
	PlaceholderCNHostname       = "CN_HOSTNAME"
	PlaceholderSettings         = "SETTINGS"
)

// Settings paths the placeholders read, as Fuel's serialized data has them.
const (
	SettingMasterIP   = "master_ip"
	SettingCNHostname = "public_ssl.hostname"
)

// placeholder is one {NAME} or {NAME.path} found in a string.
type placeholder struct {
	start, end int    // the braces included
	name, path string // path without its leading dot
}

// findPlaceholders lists the placeholders of s: an upper-case name in
// braces, optionally followed by a dotted path. "${HOME}", "%{x}" and
// "{{X}}" are not placeholders. Cost: one pass over s.
func findPlaceholders(s string) []placeholder {
	var out []placeholder
	for i := 0; i < len(s); i++ {
		if s[i] != '{' || (i > 0 && strings.IndexByte("${%", s[i-1]) >= 0) {
			continue
		}
		j := i + 1
		for j < len(s) && (s[j] >= 'A' && s[j] <= 'Z' || s[j] == '_' || j > i+1 && s[j] >= '0' && s[j] <= '9') {
			j++
		}
		if j == i+1 {
			continue
		}
		name := s[i+1 : j]
		path := ""
		if j < len(s) && s[j] == '.' {
			k := j + 1
			for k < len(s) && (isPathByte(s[k])) {
				k++
			}
			path = strings.Trim(s[j+1:k], ".")
			j = k
		}
		if j >= len(s) || s[j] != '}' || (j+1 < len(s) && s[j+1] == '}') {
			continue
		}
		out = append(out, placeholder{start: i, end: j + 1, name: name, path: path})
		i = j
	}
	return out
}

func isPathByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// checkPlaceholder says what is wrong with one placeholder ("" if nothing).
func checkPlaceholder(ph placeholder) string {
	switch ph.name {
	case PlaceholderClusterID, PlaceholderMasterIP, PlaceholderOpenstackVersion, PlaceholderCNHostname:
		if ph.path != "" {
			return fmt.Sprintf("placeholder {%s} takes no path", ph.name)
		}
		return ""
	case PlaceholderSettings:
		if ph.path == "" {
			return "placeholder {SETTINGS} needs a path: {SETTINGS.a.b}"
		}
		return ""
	}
	names := []string{PlaceholderClusterID, PlaceholderMasterIP, PlaceholderOpenstackVersion, PlaceholderCNHostname, PlaceholderSettings}
	return fmt.Sprintf("unknown placeholder {%s}%s (known: {%s}, {%s.path})", ph.name+dotted(ph.path),
		suggest.Hint(ph.name, names), strings.Join(names[:4], "}, {"), PlaceholderSettings)
}

func dotted(path string) string {
	if path == "" {
		return ""
	}
	return "." + path
}

// placeholders checks every string under n (a task's parameters or a
// check's command) for unknown or malformed placeholders, each reported
// at its line.
func (p *parser) placeholders(d *document, n *yaml.Node, path string) {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.ShortTag() != strTag || !strings.Contains(n.Value, "{") {
			return
		}
		for _, ph := range findPlaceholders(n.Value) {
			if msg := checkPlaceholder(ph); msg != "" {
				p.c.add(d.pos(n), path, "%s", msg)
			}
		}
	case yaml.MappingNode:
		fields(n, func(key string, _, v *yaml.Node) { p.placeholders(d, v, nested.Key(path, key)) })
	case yaml.SequenceNode:
		for i, item := range n.Content {
			p.placeholders(d, item, nested.Index(path, i))
		}
	}
}

// PlaceholderValues are what a cluster's placeholders resolve to.
type PlaceholderValues struct {
	ClusterID string
	// OpenstackVersion is the cluster's release's version.
	OpenstackVersion string
	// Settings is the cluster's settings tree (MASTER_IP, CN_HOSTNAME and
	// SETTINGS.path read it).
	Settings map[string]any
}

// ValuesFor are the placeholder values of a cluster of a release (nil:
// none).
func ValuesFor(c *model.Cluster, r *model.Release) PlaceholderValues {
	v := PlaceholderValues{ClusterID: c.ID, Settings: c.Settings}
	if r != nil {
		v.OpenstackVersion = r.Version
	}
	return v
}

// value resolves one placeholder.
func (v PlaceholderValues) value(ph placeholder) (string, error) {
	if msg := checkPlaceholder(ph); msg != "" {
		return "", errors.New(msg)
	}
	switch ph.name {
	case PlaceholderClusterID:
		return v.ClusterID, nil
	case PlaceholderOpenstackVersion:
		if v.OpenstackVersion == "" {
			return "", fmt.Errorf("{%s}: the cluster's release has no version (cairn release create --version)", ph.name)
		}
		return v.OpenstackVersion, nil
	case PlaceholderMasterIP:
		return v.setting(ph, SettingMasterIP)
	case PlaceholderCNHostname:
		return v.setting(ph, SettingCNHostname)
	default:
		return v.setting(ph, ph.path)
	}
}

// setting reads a scalar at a dotted path of the settings; a Fuel
// attribute {value: x} stands for x.
func (v PlaceholderValues) setting(ph placeholder, path string) (string, error) {
	var cur any = v.Settings
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			cur = nil
			break
		}
		cur = m[k]
	}
	if m, ok := cur.(map[string]any); ok {
		if inner, ok := m["value"]; ok {
			cur = inner
		}
	}
	switch x := cur.(type) {
	case nil:
		return "", fmt.Errorf("{%s}: cluster %q has no setting %s (cairn cluster settings set %s %s=…)", ph.name+dotted(ph.path), v.ClusterID, path, v.ClusterID, path)
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int:
		return strconv.Itoa(x), nil
	}
	return "", fmt.Errorf("{%s}: setting %s is not a single value", ph.name+dotted(ph.path), path)
}

// replace resolves every placeholder of s; each one without a value is
// reported to fail, and then s is returned as it is.
func (v PlaceholderValues) replace(s string, fail func(error)) string {
	phs := findPlaceholders(s)
	if len(phs) == 0 {
		return s
	}
	var b strings.Builder
	last, ok := 0, true
	for _, ph := range phs {
		val, err := v.value(ph)
		if err != nil {
			fail(err)
			ok = false
			continue
		}
		b.WriteString(s[last:ph.start])
		b.WriteString(val)
		last = ph.end
	}
	if !ok {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// ResolvePlaceholders returns g with the placeholders of every task's
// parameters and lifecycle commands replaced by the cluster's values. g is
// not modified: a task holding placeholders is copied. Every problem is
// reported, each naming the task and the field. Cost: one walk over the
// parameters.
func ResolvePlaceholders(g *model.Graph, v PlaceholderValues) (*model.Graph, error) {
	out := *g
	out.Tasks = make([]*model.Task, len(g.Tasks))
	var errs []error
	for i, t := range g.Tasks {
		out.Tasks[i] = t
		if t == nil {
			continue
		}
		var copied *model.Task
		own := func() *model.Task {
			if copied == nil {
				c := *t
				copied = &c
				out.Tasks[i] = copied
			}
			return copied
		}
		fail := func(path string, err error) {
			where := fmt.Sprintf("task %q: %s", t.ID, path)
			if t.Pos.Line > 0 {
				where = t.Pos.String() + ": " + where
			}
			errs = append(errs, fmt.Errorf("%s: placeholder %w", where, err))
		}
		if t.Parameters != nil {
			if params, changed := v.walk(t.Parameters, "parameters", fail); changed {
				own().Parameters = params.(map[string]any)
			}
		}
		for _, f := range []string{FieldTestPre, FieldTestPost} {
			if t.Extra[f] == nil {
				continue
			}
			if val, changed := v.walk(t.Extra[f], f, fail); changed {
				c := own()
				extra := make(map[string]any, len(t.Extra))
				for k, x := range c.Extra {
					extra[k] = x
				}
				extra[f] = val
				c.Extra = extra
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &out, nil
}

// walk resolves placeholders in a JSON value, rebuilding only what holds
// one; changed says whether anything did.
func (v PlaceholderValues) walk(x any, path string, fail func(string, error)) (any, bool) {
	switch y := x.(type) {
	case string:
		if !strings.Contains(y, "{") {
			return y, false
		}
		s := v.replace(y, func(err error) { fail(path, err) })
		return s, s != y
	case map[string]any:
		var out map[string]any
		keys := make([]string, 0, len(y))
		for k := range y {
			keys = append(keys, k)
		}
		sort.Strings(keys) // errors in a stable order
		for _, k := range keys {
			nv, changed := v.walk(y[k], nested.Key(path, k), fail)
			if !changed {
				continue
			}
			if out == nil {
				out = make(map[string]any, len(y))
				for k2, v2 := range y {
					out[k2] = v2
				}
			}
			out[k] = nv
		}
		if out == nil {
			return y, false
		}
		return out, true
	case []any:
		var out []any
		for i, e := range y {
			nv, changed := v.walk(e, nested.Index(path, i), fail)
			if !changed {
				continue
			}
			if out == nil {
				out = append([]any(nil), y...)
			}
			out[i] = nv
		}
		if out == nil {
			return y, false
		}
		return out, true
	}
	return x, false
}
