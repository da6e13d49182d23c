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
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			c.t.Fatalf("%s %s: body %q is not a JSON object: %v", method, path, raw, err)
		}
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
			if status != http.StatusCreated {
				t.Fatalf("create: %d %v", status, obj)
			}
			id, _ := obj["id"].(string)
			if id == "" || obj["orgID"] != OrgID || obj["name"] != "one" {
				t.Fatalf("created object %v lacks id, orgID or name", obj)
			}
			status, got := c.do("GET", base+"/"+id, nil)
			if status != http.StatusOK || got["name"] != "one" {
				t.Fatalf("get: %d %v", status, got)
			}
			status, list := c.do("GET", base, nil)
			items, _ := list[coll].([]any)
			if status != http.StatusOK || len(items) != 1 {
				t.Fatalf("list: %d %v", status, list)
			}
			status, got = c.do("PATCH", base+"/"+id, map[string]any{"name": "two", "description": nil})
			if status != http.StatusOK || got["name"] != "two" || got["id"] != id {
				t.Fatalf("patch: %d %v", status, got)
			}
			if _, has := got["description"]; has {
				t.Fatalf("patch with null kept the field: %v", got)
			}
			status, got = c.do("PUT", base+"/"+id, map[string]any{"name": "three", "extra": 1.0})
			if status != http.StatusOK || got["name"] != "three" || got["extra"] != 1.0 || got["orgID"] != OrgID {
				t.Fatalf("put: %d %v", status, got)
			}
			if status, _ := c.do("DELETE", base+"/"+id, nil); status != http.StatusNoContent {
				t.Fatalf("delete: %d", status)
			}
			for _, m := range []string{"GET", "DELETE", "PATCH"} {
				if status, _ := c.do(m, base+"/"+id, map[string]any{"name": "x"}); status != http.StatusNotFound {
					t.Fatalf("%s after delete: %d, want 404", m, status)
				}
			}
			if n := len(p.Objects(coll)); n != 0 {
				t.Fatalf("%d objects left", n)
			}
			if got := p.Requests("POST", base); got != 1 {
				t.Fatalf("POST count = %d", got)
			}
		})
	}
}

func TestRequestErrors(t *testing.T) {
	p, c := newServer(t)
	if _, err := p.Create("labels", map[string]any{"name": "taken"}); err != nil {
		t.Fatal(err)
	}
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
			if status, body := c.do(tt.method, tt.path, tt.body); status != tt.want {
				t.Fatalf("%s %s = %d %v, want %d", tt.method, tt.path, status, body, tt.want)
			}
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
		if status, body := c.do("POST", m.path, map[string]any{"labelID": m.label}); status != 201 {
			t.Fatalf("map %s: %d %v", m.path, status, body)
		}
	}
	if status, _ := c.do("POST", "/api/v2/buckets/"+bid+"/labels", map[string]any{"labelID": l1id}); status != 409 {
		t.Fatalf("duplicate mapping = %d, want 409", status)
	}
	if status, _ := c.do("POST", "/api/v2/buckets/"+bid+"/labels", map[string]any{"labelID": "missing"}); status != 404 {
		t.Fatalf("mapping a missing label = %d, want 404", status)
	}
	_, got := c.do("GET", "/api/v2/buckets/"+bid+"/labels", nil)
	labels, _ := got["labels"].([]any)
	if len(labels) != 2 || labels[0].(map[string]any)["name"] != "l1" {
		t.Fatalf("bucket labels = %v", got)
	}
	if status, _ := c.do("DELETE", "/api/v2/buckets/"+bid+"/labels/"+l2id, nil); status != 204 {
		t.Fatalf("unmap = %d", status)
	}
	if status, _ := c.do("DELETE", "/api/v2/buckets/"+bid+"/labels/"+l2id, nil); status != 404 {
		t.Fatalf("unmap twice = %d, want 404", status)
	}
	if got := p.MappingsOf("buckets", bid); len(got) != 1 || got[0] != l1id {
		t.Fatalf("bucket mappings = %v", got)
	}
	// Deleting a label removes every mapping to it.
	if status, _ := c.do("DELETE", "/api/v2/labels/"+l1id, nil); status != 204 {
		t.Fatal("delete label")
	}
	if got := p.MappingsOf("buckets", bid); len(got) != 0 {
		t.Fatalf("bucket mappings after label delete = %v", got)
	}
	if got := p.MappingsOf("dashboards", did); len(got) != 0 {
		t.Fatalf("dashboard mappings after label delete = %v", got)
	}
	_, got = c.do("GET", "/api/v2/dashboards/"+did+"/labels", nil)
	if labels, _ := got["labels"].([]any); labels == nil || len(labels) != 0 {
		t.Fatalf("dashboard labels = %v, want an empty list", got)
	}
}

func TestTokenAndFaults(t *testing.T) {
	p, c := newServer(t)
	p.SetToken("s3cret")
	if status, _ := c.do("GET", "/api/v2/labels", nil); status != 401 {
		t.Fatalf("no token = %d, want 401", status)
	}
	c.token = "s3cret"
	if status, _ := c.do("GET", "/api/v2/labels", nil); status != 200 {
		t.Fatalf("with token = %d", status)
	}

	p.FailNext("POST", "/api/v2/labels", 2)
	for i, want := range []int{500, 500, 201} {
		if status, _ := c.do("POST", "/api/v2/labels", map[string]any{"name": "x"}); status != want {
			t.Fatalf("attempt %d = %d, want %d", i, status, want)
		}
	}
	p.Inject(Fault{Path: "/api/v2/buckets*", Status: 503})
	if status, _ := c.do("GET", "/api/v2/buckets/any", nil); status != 503 {
		t.Fatalf("prefix fault = %d, want 503", status)
	}
	p.ClearFaults()
	if err := p.RejectNames("^bad"); err != nil {
		t.Fatal(err)
	}
	if status, _ := c.do("POST", "/api/v2/buckets", map[string]any{"name": "bad-one"}); status != 422 {
		t.Fatalf("rejected name = %d, want 422", status)
	}
	if status, _ := c.do("POST", "/api/v2/buckets", map[string]any{"name": "good"}); status != 201 {
		t.Fatalf("accepted name = %d, want 201", status)
	}
	if err := p.RejectNames("("); err == nil {
		t.Fatal("bad pattern accepted")
	}
	if got, want := p.Writes(), 5; got != want {
		t.Fatalf("writes = %d, want %d", got, want)
	}

	p.Inject(Fault{Method: "GET", Path: "/api/v2/tasks", Delay: time.Hour, Times: 1})
	req, _ := http.NewRequest("GET", c.base+"/api/v2/tasks", nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	hc := &http.Client{Timeout: 50 * time.Millisecond}
	if _, err := hc.Do(req); err == nil {
		t.Fatal("delayed request answered before the client timeout")
	}
}

func TestSnapshots(t *testing.T) {
	a, b := New(), New()
	for _, p := range []*Platform{a, b} {
		l, _ := p.Create("labels", map[string]any{"name": "l"})
		bk, _ := p.Create("buckets", map[string]any{"name": "b"})
		if err := p.Map("buckets", bk, l); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(a.Snapshot(), b.Snapshot()) {
		t.Fatalf("equal platforms differ:\n%s\n%s", a.Snapshot(), b.Snapshot())
	}
	// Recreating the label gives it a new id: Snapshot sees it,
	// ContentSnapshot does not once the mapping is restored too.
	before := a.ContentSnapshot()
	l := a.Labels()[0]
	bk := a.Buckets()[0]
	srv := httptest.NewServer(a)
	defer srv.Close()
	c := client{t: t, base: srv.URL}
	c.do("DELETE", "/api/v2/labels/"+l["id"].(string), nil)
	if bytes.Equal(before, a.ContentSnapshot()) {
		t.Fatal("snapshot did not change after delete")
	}
	nl, _ := a.Create("labels", map[string]any{"name": "l"})
	if err := a.Map("buckets", bk["id"].(string), nl); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, a.ContentSnapshot()) {
		t.Fatalf("content snapshot differs after recreate:\n%s\n%s", before, a.ContentSnapshot())
	}
	if bytes.Equal(a.Snapshot(), b.Snapshot()) {
		t.Fatal("id snapshot ignores the new id")
	}
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
	if n := len(p.Dashboards()); n != 20 {
		t.Fatalf("%d dashboards, want 20", n)
	}
	if n := p.TotalRequests(); n != 40 {
		t.Fatalf("%d requests counted, want 40", n)
	}
}
