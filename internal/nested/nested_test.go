package nested

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func doc() map[string]any {
	return map[string]any{
		"url": "http://x",
		"config": map[string]any{
			"items": []any{"a", map[string]any{"b": int64(1), "a": true}},
			"a/b~c": nil,
		},
	}
}

func TestWalkVisitsInKeyOrderWithPaths(t *testing.T) {
	var got []string
	err := Walk(doc(), "spec", func(p Path, v any) error {
		got = append(got, p.String()+"="+Describe(v))
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"spec=an object",
		"spec.config=an object",
		"spec.config.a/b~c=null",
		"spec.config.items=a list",
		"spec.config.items[0]=a string",
		"spec.config.items[1]=an object",
		"spec.config.items[1].a=a boolean",
		"spec.config.items[1].b=a number",
		"spec.url=a string",
	}, got)
}

func TestWalkWithoutRootNamesPathsFromTheFirstKey(t *testing.T) {
	var got []string
	require.NoError(t, Walk([]any{map[string]any{"k": 1}}, "", func(p Path, v any) error {
		got = append(got, p.String())
		return nil
	}))
	assert.Equal(t, []string{"", "[0]", "[0].k"}, got)
}

func TestWalkSkipsChildrenAndStops(t *testing.T) {
	var got []string
	err := Walk(doc(), "", func(p Path, v any) error {
		got = append(got, p.String())
		if p.String() == "config" {
			return SkipChildren
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"", "config", "url"}, got)

	got = nil
	err = Walk(doc(), "", func(p Path, v any) error {
		got = append(got, p.String())
		if v == "a" {
			return SkipAll
		}
		return nil
	})
	require.NoError(t, err, "SkipAll is no error")
	assert.Equal(t, []string{"", "config", "config.a/b~c", "config.items", "config.items[0]"}, got)
}

func TestWalkReturnsTheVisitorsError(t *testing.T) {
	boom := errors.New("boom")
	n := 0
	err := Walk(doc(), "", func(p Path, v any) error {
		n++
		if p.Depth() == 2 {
			return boom
		}
		return nil
	})
	require.ErrorIs(t, err, boom)
	assert.Equal(t, 3, n, "the walk ends at the first error")
}

func TestPathPointerEscapes(t *testing.T) {
	var ptrs []string
	require.NoError(t, Walk(doc(), "spec", func(p Path, v any) error {
		ptrs = append(ptrs, p.Pointer())
		return nil
	}))
	assert.Contains(t, ptrs, "")
	assert.Contains(t, ptrs, "/config/a~1b~0c")
	assert.Contains(t, ptrs, "/config/items/1/b")
}

func TestMapCopiesAndRewrites(t *testing.T) {
	in := doc()
	var paths []string
	out, err := Map(in, "spec", func(p Path, v any) (any, error) {
		paths = append(paths, p.String())
		if s, ok := v.(string); ok {
			return strings.ToUpper(s), nil
		}
		return v, nil
	})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{
		"url": "HTTP://X",
		"config": map[string]any{
			"items": []any{"A", map[string]any{"b": int64(1), "a": true}},
			"a/b~c": nil,
		},
	}, out)
	assert.Equal(t, doc(), in, "the input is left as it was")
	out.(map[string]any)["config"].(map[string]any)["items"].([]any)[0] = "changed"
	assert.Equal(t, "a", in["config"].(map[string]any)["items"].([]any)[0], "the copy shares no list with the input")
	assert.Equal(t, []string{"spec", "spec.config", "spec.config.a/b~c", "spec.config.items", "spec.config.items[0]",
		"spec.config.items[1]", "spec.config.items[1].a", "spec.config.items[1].b", "spec.url"}, paths)
}

func TestMapSkipChildrenKeepsTheValue(t *testing.T) {
	ref := map[string]any{"envRef": map[string]any{"key": "A"}}
	var visited []string
	out, err := Map(map[string]any{"a": ref, "b": []any{1}}, "", func(p Path, v any) (any, error) {
		visited = append(visited, p.String())
		if m, ok := v.(map[string]any); ok && m["envRef"] != nil {
			return "resolved", SkipChildren
		}
		return v, nil
	})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"a": "resolved", "b": []any{1}}, out)
	assert.Equal(t, []string{"", "a", "b", "b[0]"}, visited)
}

func TestMapWalksIntoWhatFnReturns(t *testing.T) {
	out, err := Map(map[string]any{"tags": []string{"a"}}, "", func(p Path, v any) (any, error) {
		switch x := v.(type) {
		case []string:
			return []any{x[0]}, nil
		case string:
			return x + "!", nil
		}
		return v, nil
	})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"tags": []any{"a!"}}, out, "a converted list is walked into")
}

func TestMapStopsAtAnError(t *testing.T) {
	boom := errors.New("boom")
	out, err := Map(doc(), "", func(p Path, v any) (any, error) {
		if p.String() == "config.items[1]" {
			return nil, boom
		}
		return v, nil
	})
	require.ErrorIs(t, err, boom)
	assert.Nil(t, out)
}

func TestDescribe(t *testing.T) {
	for v, want := range map[any]string{
		nil: "null", true: "a boolean", "s": "a string", 1: "a number", int64(1): "a number",
		1.5: "a number", json.Number("2"): "a number", uint8(1): "a number",
	} {
		assert.Equal(t, want, Describe(v), "%#v", v)
	}
	assert.Equal(t, "a list", Describe([]any{}))
	assert.Equal(t, "an object", Describe(map[string]any{}))
	assert.Equal(t, "[]string", Describe([]string{}))
}

func TestKeyAndIndex(t *testing.T) {
	assert.Equal(t, "url", Key("", "url"))
	assert.Equal(t, "spec.url", Key("spec", "url"))
	assert.Equal(t, "argv[1]", Index("argv", 1))
	assert.Equal(t, "[0]", Index("", 0))
}

func TestMapAnyOrderCopiesLikeMap(t *testing.T) {
	upper := func(p Path, v any) (any, error) {
		if s, ok := v.(string); ok {
			return p.String() + "=" + strings.ToUpper(s), nil
		}
		return v, nil
	}
	want, err := Map(doc(), "spec", upper)
	require.NoError(t, err)
	got, err := MapAnyOrder(doc(), "spec", upper)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, "spec.config.items[0]=A", got.(map[string]any)["config"].(map[string]any)["items"].([]any)[0])
}

func TestViaJSON(t *testing.T) {
	type point struct {
		X int `json:"x"`
	}
	out, ok := ViaJSON([]point{{X: 1}})
	require.True(t, ok)
	assert.Equal(t, []any{map[string]any{"x": float64(1)}}, out)

	ch := make(chan int)
	out, ok = ViaJSON(ch)
	assert.False(t, ok, "a channel has no JSON form")
	assert.Equal(t, fmt.Sprint(ch), out)
}

func TestTextAndCut(t *testing.T) {
	assert.Equal(t, "plain", Text("plain"), "a string is not quoted")
	assert.Equal(t, `{"a":[1,true]}`, Text(map[string]any{"a": []any{1, true}}))
	assert.Equal(t, "3", Text(3))

	assert.Equal(t, "short", Cut("short", 5), "a string at the limit stays whole")
	assert.Equal(t, "éé…", Cut("éééé", 3), "the limit counts characters, the last one the ellipsis")
}
