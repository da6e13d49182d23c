package yaql

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// corpus exercises every function and operator beyond what fuel-library
// uses, with edge cases: missing keys, nulls, empty lists.
var corpus = []string{
	// literals and paths
	`$`, `$.uid`, `$.name`, `$.fqdn`, `$.missing`, `$.storage.objects_ceph`, `$.public_ssl.cert_data.content`,
	`1`, `-2`, `2.5`, `'a'`, `"b"`, `true`, `false`, `null`, `[]`, `[1, 'a', null]`, `{}`, `{a => 1, 'b' => [2]}`,
	`bare_word`, `[1, 2, 3][0]`, `[1, 2, 3][-1]`, `$.roles[0]`, `{a => 1}['a']`, `{a => 1}['b', 'dflt']`,
	`$node`, `$common.storage`, `$node.uid = $.uid`,
	// get
	`$.get('debug')`, `$.get('nope')`, `$.get('nope', 'dflt')`, `$.get('nope', {}).get('x')`,
	`$.network_metadata.get('vips', {}).get('management')`,
	// comparison and logic
	`$.debug = true`, `$.debug != false`, `1 < 2`, `2 <= 2`, `'a' < 'b'`, `3 > 2.5`, `1 >= 1.0`, `null = null`,
	`$.missing = null`, `1 = 1.0`, `[1, 2] = [1, 2]`, `{a => 1} = {a => 1}`, `'1' = 1`,
	`true and 'x'`, `0 and 1`, `null or 'y'`, `'' or []`, `not $.debug`, `not []`, `not 0`,
	`$.debug and changed($.debug)`, `'compute' in $.roles`, `'x' in $.roles`, `'b' in 'abc'`, `'uid' in $node`,
	`1 in [1, 2]`, `null in [null]`,
	// arithmetic and +
	`1 + 2`, `1 + 2.5`, `7 - 10`, `3 * 4`, `7 / 2`, `-7 / 2`, `6 / 3`, `7 mod 3`, `-7 mod 3`, `2.5 * 2`,
	`'a' + 'b'`, `[1] + [2, 3]`, `{a => 1} + {b => 2}`, `{a => 1} + {a => 2}`, `'a' + 1`, `1 + null`,
	// collections
	`$.network_metadata.nodes.values().name`, `$.network_metadata.nodes.keys()`, `$.network_metadata.vips.items().len()`,
	`len($.roles)`, `len('héllo')`, `len({})`, `len(null)`, `$.roles.count()`, `$.roles.len()`, `{1 => 'a', null => 'c', 2.5 => 'd'}`,
	`$.network_metadata.nodes.values().where($.uid = '1').fqdn`,
	`$.network_metadata.nodes.values().where('compute' in $.node_roles).uid`,
	`$.network_metadata.nodes.values().select($.name + '.' + $.uid)`,
	`$.network_metadata.nodes.values().any($.node_roles.any($.matches('^ceph')))`,
	`$.roles.any()`, `[].any()`, `[0, null].any()`, `[0].all()`, `[1, 0].all()`, `[1, 2].all($ > 0)`, `[].all()`,
	`$.roles.first()`, `[].first()`, `[].first('none')`, `[1, 2].last()`, `[1, 1, 2].distinct()`,
	`[[1, [2]], 3, [[4]]].flatten()`, `[1, 2, 2, 'a'].toSet()`, `[1, 2, 3].toSet().intersect([2, 3, 4].toSet())`,
	`set(3, 1, 3)`, `[1, 2].toSet().intersect([2].toSet())`,
	`'controller'.matches('(primary-)?controller')`, `'compute'.matches('^ctrl')`, `1.matches('x')`,
	`concat('a', 'b', 'c')`, `concat('a', null)`, `[1].concat([2], [3])`,
	`coalesce(null, $.missing, 'x')`, `coalesce(null)`, `coalesce($.missing.x, 1)`,
	`switch(false => 1, $.debug => 2, true => 3)`, `switch(false => 1)`,
	`switch($.get('deployed_before', {}).get('value') => 1, true => 6)`,
	`dict(a => 1, b => $.uid)`, `dict([['a', 1], ['b', 2]])`, `dict($.storage.items())`, `dict()`,
	`$.storage.set('images_ceph', 'changed')`, `{a => 1}.set({b => 2})`, `{a => 1}.set(c => 3)`,
	`$.roles.toJson()`, `{b => [1, 'x'], a => null, c => 1.5}.toJson()`, `'é'.toJson()`,
	`$.storage.toYaml()`, `$node.toYaml()`, `{a => [1, {b => 'two words'}], c => ''}.toYaml()`,
	// Fuel's functions
	`changed($.debug)`, `changed($.uid)`, `changed($.public_ssl.hostname)`, `changed($.missing)`, `changed($.missing.deeper)`,
	`changedAny($.debug, $.uid)`, `changedAny($.uid, $.name)`, `changedAll($.debug, $.public_ssl)`, `changedAll($.debug, $.uid)`,
	`new($.uid)`, `old($.uid)`, `old($)`, `len(old($)) > 0`, `old($.public_ssl.horizon)`, `old($.missing.deeper)`,
	`added($.network_metadata.nodes.values().uid)`, `added($.network_metadata.nodes)`, `added($.roles)`,
	`deleted($.network_metadata.nodes.values().uid)`, `deleted($.plugins)`, `deleted($.storage)`, `added($.uid)`,
	`$.network_metadata.nodes.values().where($.uid = new($.uid)).name.first()`,
	`$.network_metadata.nodes.values().where(changed($.debug)).len()`,
	`$.uid in added($.network_metadata.nodes.values()).uid`,
	`coalesce(deleted($.network_metadata.nodes.values().fqdn), [])`,
	// errors on both sides
	`$.missing.deeper`, `$.uid.x`, `{a => 1}['b']`, `[1][5]`, `1 < 'a'`, `$.roles.where($ > 1)`,
}

// TestReference evaluates every yaql expression of fuel-library and the
// corpus with Cairn and with the reference implementation (python3-yaql)
// over the same fixtures, and requires the same results. Errors must agree
// that there is an error; toYaml texts must read back to the same data.
func TestReference(t *testing.T) {
	python := pythonWithYaql(t)
	fuel := fuelExpressions(t)
	var srcs []string
	seen := map[string]bool{}
	for _, e := range fuel {
		if !seen[e.Source] {
			seen[e.Source] = true
			srcs = append(srcs, e.Source)
		}
	}
	fromFuel := len(srcs)
	for _, s := range corpus {
		if !seen[s] {
			seen[s] = true
			srcs = append(srcs, s)
		}
	}
	fxs := fixtures(t)

	type pyFixture struct {
		Name   string `json:"name"`
		New    any    `json:"new"`
		Old    any    `json:"old"`
		HasOld bool   `json:"has_old"`
		Node   any    `json:"node"`
		Common any    `json:"common"`
	}
	req := struct {
		Fixtures []pyFixture `json:"fixtures"`
		Exprs    []string    `json:"exprs"`
	}{Exprs: srcs}
	for _, f := range fxs {
		req.Fixtures = append(req.Fixtures, pyFixture{f.Name, f.In.New, f.In.Old, f.In.HasOld, f.In.Vars["node"], f.In.Vars["common"]})
	}
	in, err := json.Marshal(req)
	require.NoError(t, err)
	cmd := exec.Command(python, filepath.Join("testdata", "reference.py"))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	var resp struct {
		Results [][]struct {
			Value any     `json:"value"`
			Error *string `json:"error"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal(out, &resp))
	require.Len(t, resp.Results, len(srcs))

	compared, errorsBoth := 0, 0
	for i, src := range srcs {
		x, err := Parse(src)
		if !assert.NoError(t, err, "parse %q", src) {
			continue
		}
		for j, f := range fxs {
			want := resp.Results[i][j]
			got, gerr := x.Eval(f.In)
			compared++
			if i < fromFuel {
				// The fixtures carry every key fuel-library reads, so its
				// expressions are compared on values, not on errors.
				assert.NoError(t, gerr, "%s\n  fixture %s", src, f.Name)
			}
			if want.Error != nil || gerr != nil {
				if assert.Truef(t, want.Error != nil && gerr != nil, "%s\n  fixture %s\n  cairn: %v (err %v)\n  yaql:  %v (err %v)", src, f.Name, show(got), gerr, show(want.Value), deref(want.Error)) {
					errorsBoth++
				}
				continue
			}
			assert.Truef(t, sameResult(src, got, want.Value), "%s\n  fixture %s\n  cairn: %s\n  yaql:  %s", src, f.Name, show(got), show(want.Value))
		}
	}
	t.Logf("%d distinct expressions (%d from %d in fuel-library, %d from the corpus), %d fixtures: %d evaluations compared, %d errors on both sides",
		len(srcs), fromFuel, len(fuel), len(srcs)-fromFuel, len(fxs), compared, errorsBoth)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func show(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(raw)
}

// sameResult compares through JSON (numbers by value); toYaml texts are
// compared by what they read back to.
func sameResult(src string, got, want any) bool {
	if gs, ok := got.(string); ok && strings.Contains(src, "toYaml") {
		ws, ok := want.(string)
		if !ok {
			return false
		}
		var a, b any
		if yaml.Unmarshal([]byte(gs), &a) != nil || yaml.Unmarshal([]byte(ws), &b) != nil {
			return false
		}
		return jsonEqual(a, b)
	}
	return jsonEqual(got, want)
}

func jsonEqual(a, b any) bool {
	ra, err1 := json.Marshal(a)
	rb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return false
	}
	var x, y any
	if json.Unmarshal(ra, &x) != nil || json.Unmarshal(rb, &y) != nil {
		return false
	}
	nx, _ := Normalize(x)
	ny, _ := Normalize(y)
	return equalStrict(nx, ny)
}

// equalStrict is equal without Python's bool/number mixing, so a result
// of true does not pass for 1.
func equalStrict(a, b any) bool {
	if isBool(a) != isBool(b) {
		return false
	}
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalStrict(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !equalStrict(v, w) {
				return false
			}
		}
		return true
	}
	return equal(a, b)
}
