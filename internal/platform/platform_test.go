package platform

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type client struct {
	t     *testing.T
	base  string
	token string
}

func (c client) do(method, path string, body any) (int, map[string]any) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(c.t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	require.NoError(c.t, err)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(bytes.TrimSpace(raw)) > 0 {
		err := json.Unmarshal(raw, &out)
		require.NoError(c.t, err, "%s %s: body %q is not a JSON object: %v", method, path, raw, err)
	}
	return resp.StatusCode, out
}

func newServer(t *testing.T) (*Platform, client) {
	p := New()
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return p, client{t: t, base: srv.URL}
}

func TestCRUD(t *testing.T) {
	for _, coll := range collections {
		t.Run(coll, func(t *testing.T) {
			p, c := newServer(t)
			base := "/api/v2/" + coll
			status, obj := c.do("POST", base, map[string]any{"name": "one", "description": "d"})
			require.Equal(t, http.StatusCreated, status, "create: %d %v", status, obj)
			id, _ := obj["id"].(string)
			require.NotEmpty(t, id, "created object %v lacks id, orgID or name", obj)
			require.Equal(t, OrgID, obj["orgID"], "created object %v lacks id, orgID or name", obj)
			require.Equal(t, "one", obj["name"], "created object %v lacks id, orgID or name", obj)
			status, got := c.do("GET", base+"/"+id, nil)
			require.Equal(t, http.StatusOK, status, "get: %d %v", status, got)
			require.Equal(t, "one", got["name"], "get: %d %v", status, got)
			status, list := c.do("GET", base, nil)
			items, _ := list[coll].([]any)
			require.Equal(t, http.StatusOK, status, "list: %d %v", status, list)
			require.Len(t, items, 1, "list: %d %v", status, list)
			status, got = c.do("PATCH", base+"/"+id, map[string]any{"name": "two", "description": nil})
			require.Equal(t, http.StatusOK, status, "patch: %v", got)
			require.Equal(t, "two", got["name"], "patch: %v", got)
			require.Equal(t, id, got["id"], "patch: %v", got)
			_, has := got["description"]
			require.False(t, has, "patch with null kept the field: %v", got)
			status, got = c.do("PUT", base+"/"+id, map[string]any{"name": "three", "extra": 1.0})
			require.Equal(t, http.StatusOK, status, "put: %d %v", status, got)
			require.Equal(t, "three", got["name"], "put: %d %v", status, got)
			require.Equal(t, 1.0, got["extra"], "put: %d %v", status, got)
			require.Equal(t, OrgID, got["orgID"], "put: %d %v", status, got)
			status, _ = c.do("DELETE", base+"/"+id, nil)
			require.Equal(t, http.StatusNoContent, status, "delete")
			for _, m := range []string{"GET", "DELETE", "PATCH"} {
				status, _ := c.do(m, base+"/"+id, map[string]any{"name": "x"})
				require.Equal(t, http.StatusNotFound, status, "%s after delete: %d, want 404", m, status)
			}
			n := len(p.Objects(coll))
			require.Equal(t, 0, n, "%d objects left", n)
			require.Equal(t, 1, p.Requests("POST", base), "POST count")
		})
	}
}

func TestRequestErrors(t *testing.T) {
	p, c := newServer(t)
	_, err := p.Create("labels", map[string]any{"name": "taken"})
	require.NoError(t, err)
	tests := []struct {
		name   string
		method string
		path   string
		body   any
		want   int
	}{
		{"unknown collection", "GET", "/api/v2/widgets", nil, 404},
		{"missing name", "POST", "/api/v2/buckets", map[string]any{"description": "x"}, 400},
		{"body not an object", "POST", "/api/v2/buckets", []any{1}, 400},
		{"duplicate label name", "POST", "/api/v2/labels", map[string]any{"name": "taken"}, 409},
		{"duplicate dashboard name is fine", "POST", "/api/v2/dashboards", map[string]any{"name": "taken"}, 201},
		{"mapping on absent object", "GET", "/api/v2/buckets/nope/labels", nil, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := c.do(tt.method, tt.path, tt.body)
			require.Equal(t, tt.want, status, "%s %s = %d %v, want %d", tt.method, tt.path, status, body, tt.want)
		})
	}
}

func TestLabelMappings(t *testing.T) {
	p, c := newServer(t)
	_, l1 := c.do("POST", "/api/v2/labels", map[string]any{"name": "l1"})
	_, l2 := c.do("POST", "/api/v2/labels", map[string]any{"name": "l2"})
	_, b := c.do("POST", "/api/v2/buckets", map[string]any{"name": "b"})
	_, d := c.do("POST", "/api/v2/dashboards", map[string]any{"name": "d"})
	bid, did := b["id"].(string), d["id"].(string)
	l1id, l2id := l1["id"].(string), l2["id"].(string)

	for _, m := range []struct{ path, label string }{
		{"/api/v2/buckets/" + bid + "/labels", l1id},
		{"/api/v2/buckets/" + bid + "/labels", l2id},
		{"/api/v2/dashboards/" + did + "/labels", l1id},
	} {
		status, body := c.do("POST", m.path, map[string]any{"labelID": m.label})
		require.Equal(t, 201, status, "map %s: %d %v", m.path, status, body)
	}
	status, _ := c.do("POST", "/api/v2/buckets/"+bid+"/labels", map[string]any{"labelID": l1id})
	require.Equal(t, 409, status, "duplicate mapping = %d, want 409", status)
	status, _ = c.do("POST", "/api/v2/buckets/"+bid+"/labels", map[string]any{"labelID": "missing"})
	require.Equal(t, 404, status, "mapping a missing label = %d, want 404", status)
	_, got := c.do("GET", "/api/v2/buckets/"+bid+"/labels", nil)
	labels, _ := got["labels"].([]any)
	require.Len(t, labels, 2, "bucket labels = %v", got)
	require.Equal(t, "l1", labels[0].(map[string]any)["name"], "bucket labels = %v", got)
	status, _ = c.do("DELETE", "/api/v2/buckets/"+bid+"/labels/"+l2id, nil)
	require.Equal(t, 204, status, "unmap")
	status, _ = c.do("DELETE", "/api/v2/buckets/"+bid+"/labels/"+l2id, nil)
	require.Equal(t, 404, status, "unmap twice = %d, want 404", status)
	require.Equal(t, []string{l1id}, p.MappingsOf("buckets", bid), "bucket mappings")
	// Deleting a label removes every mapping to it.
	status, _ = c.do("DELETE", "/api/v2/labels/"+l1id, nil)
	require.Equal(t, 204, status, "delete label")
	require.Empty(t, p.MappingsOf("buckets", bid), "bucket mappings after label delete")
	require.Empty(t, p.MappingsOf("dashboards", did), "dashboard mappings after label delete")
	_, got = c.do("GET", "/api/v2/dashboards/"+did+"/labels", nil)
	labels, _ = got["labels"].([]any)
	require.NotNil(t, labels, "dashboard labels = %v, want an empty list", got)
	require.Empty(t, labels, "dashboard labels = %v, want an empty list", got)
}

func TestTokenAndFaults(t *testing.T) {
	p, c := newServer(t)
	p.SetToken("s3cret")
	status, _ := c.do("GET", "/api/v2/labels", nil)
	require.Equal(t, 401, status, "no token = %d, want 401", status)
	c.token = "s3cret"
	status, _ = c.do("GET", "/api/v2/labels", nil)
	require.Equal(t, 200, status, "with token")

	p.FailNext("POST", "/api/v2/labels", 2)
	for i, want := range []int{500, 500, 201} {
		status, _ := c.do("POST", "/api/v2/labels", map[string]any{"name": "x"})
		require.Equal(t, want, status, "attempt %d = %d, want %d", i, status, want)
	}
	p.Inject(Fault{Path: "/api/v2/buckets*", Status: 503})
	status, _ = c.do("GET", "/api/v2/buckets/any", nil)
	require.Equal(t, 503, status, "prefix fault = %d, want 503", status)
	p.ClearFaults()
	require.NoError(t, p.RejectNames("^bad"))
	status, _ = c.do("POST", "/api/v2/buckets", map[string]any{"name": "bad-one"})
	require.Equal(t, 422, status, "rejected name = %d, want 422", status)
	status, _ = c.do("POST", "/api/v2/buckets", map[string]any{"name": "good"})
	require.Equal(t, 201, status, "accepted name = %d, want 201", status)
	require.Error(t, p.RejectNames("("), "bad pattern accepted")
	got, want := p.Writes(), 5
	require.Equal(t, want, got, "writes")

	p.Inject(Fault{Method: "GET", Path: "/api/v2/tasks", Delay: time.Hour, Times: 1})
	req, _ := http.NewRequest("GET", c.base+"/api/v2/tasks", nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	hc := &http.Client{Timeout: 50 * time.Millisecond}
	_, err := hc.Do(req)
	require.Error(t, err, "delayed request answered before the client timeout")
}

func TestSnapshots(t *testing.T) {
	a, b := New(), New()
	for _, p := range []*Platform{a, b} {
		l, _ := p.Create("labels", map[string]any{"name": "l"})
		bk, _ := p.Create("buckets", map[string]any{"name": "b"})
		require.NoError(t, p.Map("buckets", bk, l))
	}
	require.Equal(t, b.Snapshot(), a.Snapshot(), "equal platforms differ")
	// Recreating the label gives it a new id: Snapshot sees it,
	// ContentSnapshot does not once the mapping is restored too.
	before := a.ContentSnapshot()
	l := a.Labels()[0]
	bk := a.Buckets()[0]
	srv := httptest.NewServer(a)
	defer srv.Close()
	c := client{t: t, base: srv.URL}
	c.do("DELETE", "/api/v2/labels/"+l["id"].(string), nil)
	require.NotEqual(t, a.ContentSnapshot(), before, "snapshot did not change after delete")
	nl, _ := a.Create("labels", map[string]any{"name": "l"})
	require.NoError(t, a.Map("buckets", bk["id"].(string), nl))
	require.Equal(t, a.ContentSnapshot(), before, "content snapshot differs after recreate")
	require.NotEqual(t, b.Snapshot(), a.Snapshot(), "id snapshot ignores the new id")
}

func TestConcurrentUse(t *testing.T) {
	p, c := newServer(t)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, obj := c.do("POST", "/api/v2/dashboards", map[string]any{"name": fmt.Sprint("d", i)})
			if status != 201 {
				t.Errorf("create %d: %d", i, status)
				return
			}
			c.do("GET", "/api/v2/dashboards/"+obj["id"].(string), nil)
			_ = p.Snapshot()
		}()
	}
	wg.Wait()
	n := len(p.Dashboards())
	require.Equal(t, 20, n, "%d dashboards, want 20", n)
	n = p.TotalRequests()
	require.Equal(t, 40, n, "%d requests counted, want 40", n)
}
