package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

func TestStacksCRUD(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		s := newTestServer(t, be.url(t))
		r := s.do(http.MethodPost, "/v1/stacks", map[string]any{"name": "S1", "description": "first", "urls": []string{"https://example.com/pkg.yaml"}}).expect(t, http.StatusCreated)
		var raw map[string]json.RawMessage
		r.json(t, &raw)
		var rec StackRecord
		r.json(t, &rec)
		if rec.ID == "" || rec.StackID != rec.ID || rec.Name != "S1" || rec.URLs[0] != "https://example.com/pkg.yaml" || rec.CreatedAt.IsZero() || !rec.UpdatedAt.Equal(rec.CreatedAt) {
			t.Fatalf("record %+v", rec)
		}
		if string(raw["config"]) != "{}" || string(raw["resources"]) != "[]" {
			t.Fatalf("config %s resources %s", raw["config"], raw["resources"])
		}
		if r.Header.Get("Location") != "/v1/stacks/"+rec.ID {
			t.Fatalf("Location %q", r.Header.Get("Location"))
		}
		s.do(http.MethodPost, "/v1/stacks", map[string]any{"name": "S2"}).expect(t, http.StatusCreated)

		var got StackRecord
		s.do(http.MethodGet, "/v1/stacks/"+rec.ID, nil).expect(t, http.StatusOK).json(t, &got)
		if got.ID != rec.ID || got.Description != "first" {
			t.Fatalf("got %+v", got)
		}
		var list struct {
			Stacks []StackRecord `json:"stacks"`
		}
		s.do(http.MethodGet, "/v1/stacks", nil).expect(t, http.StatusOK).json(t, &list)
		if len(list.Stacks) != 2 {
			t.Fatalf("list %+v", list)
		}
		s.do(http.MethodGet, "/v1/stacks?name=S2", nil).expect(t, http.StatusOK).json(t, &list)
		if len(list.Stacks) != 1 || list.Stacks[0].Name != "S2" {
			t.Fatalf("list ?name=S2 %+v", list)
		}
		s.do(http.MethodGet, "/v1/stacks?name=nobody", nil).expect(t, http.StatusOK).json(t, &list)
		if len(list.Stacks) != 0 {
			t.Fatalf("list ?name=nobody %+v", list)
		}
		s.do(http.MethodGet, "/v1/stacks/missing", nil).expect(t, http.StatusNotFound)

		for name, body := range map[string]any{
			"no name":       map[string]any{"description": "x"},
			"bad scheme":    map[string]any{"name": "x", "urls": []string{"ftp://example.com/p.yaml"}},
			"file refused":  map[string]any{"name": "x", "urls": []string{"file:///etc/passwd"}},
			"not a URL":     map[string]any{"name": "x", "urls": []string{"::nope"}},
			"relative path": map[string]any{"name": "x", "urls": []string{"pkg.yaml"}},
		} {
			t.Run(name, func(t *testing.T) {
				s.do(http.MethodPost, "/v1/stacks", body).expect(t, http.StatusUnprocessableEntity)
			})
		}
		s.do(http.MethodPost, "/v1/stacks", `{"name": 1}`, "Content-Type", "application/json").expect(t, http.StatusBadRequest)
		s.do(http.MethodGet, "/v1/stacks", nil).json(t, &list)
		if len(list.Stacks) != 2 {
			t.Fatalf("bad input created stacks: %+v", list)
		}
	})
}

// TestWithoutTemporal checks the routes that need Temporal answer 503 in
// the error shape when the server has none, after validating what they
// can: a bad package is still 422, a missing stack still 404.
func TestWithoutTemporal(t *testing.T) {
	s := newTestServer(t, sqliteURL(t))
	var rec StackRecord
	s.do(http.MethodPost, "/v1/stacks", map[string]any{"name": "s"}).expect(t, http.StatusCreated).json(t, &rec)
	s.do(http.MethodPost, "/v1/clusters", map[string]any{"id": "c1", "name": "c"}).expect(t, http.StatusCreated)
	s.do(http.MethodPut, "/v1/clusters/c1/graphs/default", releaseTasksYAML, "Content-Type", "application/yaml").expect(t, http.StatusCreated)
	tests := []struct {
		method, path string
		body         string
		want         int
	}{
		{http.MethodPost, "/v1/stacks/" + rec.ID + "/apply", validPackageYAML, http.StatusServiceUnavailable},
		{http.MethodPost, "/v1/stacks/" + rec.ID + "/dry-run", validPackageYAML, http.StatusServiceUnavailable},
		{http.MethodPost, "/v1/stacks/" + rec.ID + "/apply", "kind: Nope\n", http.StatusUnprocessableEntity},
		{http.MethodPost, "/v1/stacks/missing/apply", validPackageYAML, http.StatusNotFound},
		{http.MethodPost, "/v1/stacks/" + rec.ID + "/apply?onFailure=explode", validPackageYAML, http.StatusBadRequest},
		{http.MethodPost, "/v1/stacks/" + rec.ID + "/apply?parallelism=0", validPackageYAML, http.StatusBadRequest},
		{http.MethodPost, "/v1/stacks/" + rec.ID + "/apply?wait=maybe", validPackageYAML, http.StatusBadRequest},
		{http.MethodPost, "/v1/stacks/" + rec.ID + "/apply?cluster=nope", validPackageYAML, http.StatusBadRequest},
		{http.MethodDelete, "/v1/stacks/" + rec.ID, "", http.StatusServiceUnavailable},
		{http.MethodPost, "/v1/clusters/c1/executions", `{}`, http.StatusServiceUnavailable},
		{http.MethodPost, "/v1/clusters/c1/executions", `{"type": "upgrade"}`, http.StatusUnprocessableEntity},
		{http.MethodGet, "/v1/executions", "", http.StatusServiceUnavailable},
		{http.MethodGet, "/v1/executions/x", "", http.StatusServiceUnavailable},
		{http.MethodGet, "/v1/executions/x/events", "", http.StatusServiceUnavailable},
		{http.MethodPost, "/v1/executions/x/cancel", "", http.StatusServiceUnavailable},
		{http.MethodPost, "/v1/executions/x/retry", "", http.StatusServiceUnavailable},
		{http.MethodPost, "/v1/executions/x/decision", `{"action": "retry"}`, http.StatusServiceUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path+" "+tt.body, func(t *testing.T) {
			ctype := "application/yaml"
			if strings.HasPrefix(tt.body, "{") {
				ctype = "application/json"
			}
			s.do(tt.method, tt.path, tt.body, "Content-Type", ctype).expect(t, tt.want)
		})
	}
}

func TestMetrics(t *testing.T) {
	t.Run("own registry", func(t *testing.T) {
		s := newTestServer(t, sqliteURL(t))
		s.do(http.MethodGet, "/v1/stacks", nil).expect(t, http.StatusOK)
		s.do(http.MethodGet, "/v1/stacks/missing", nil).expect(t, http.StatusNotFound)
		body := string(s.do(http.MethodGet, "/metrics", nil).expect(t, http.StatusOK).Body)
		for _, want := range []string{
			`cairn_http_requests_total{method="GET",route="/v1/stacks",status="200"} 1`,
			`cairn_http_requests_total{method="GET",route="/v1/stacks/:id",status="404"} 1`,
			`go_goroutines`,
		} {
			if !strings.Contains(body, want) {
				t.Fatalf("metrics lack %q:\n%s", want, body)
			}
		}
	})
	t.Run("server registry", func(t *testing.T) {
		reg := prometheus.NewRegistry()
		sdk := prometheus.NewCounter(prometheus.CounterOpts{Name: "temporal_request", Help: "stands for the SDK's series"})
		reg.MustRegister(sdk)
		sdk.Inc()
		s := newTestServer(t, sqliteURL(t), withDeps(func(d *Deps) {
			d.Metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
			d.MetricsRegisterer = reg
		}))
		s.do(http.MethodGet, "/healthz", nil).expect(t, http.StatusOK)
		body := string(s.do(http.MethodGet, "/metrics", nil).expect(t, http.StatusOK).Body)
		if !strings.Contains(body, "temporal_request 1") || !strings.Contains(body, `cairn_http_requests_total{method="GET",route="/healthz",status="200"} 1`) {
			t.Fatalf("metrics:\n%s", body)
		}
	})
}

func TestServerTimeouts(t *testing.T) {
	st := openStore(t, sqliteURL(t))
	for _, tt := range []struct {
		cfg  Config
		want [4]time.Duration
	}{
		{Config{}, [4]time.Duration{DefaultReadTimeout, DefaultReadHeaderTimeout, DefaultWriteTimeout, DefaultIdleTimeout}},
		{Config{ReadTimeout: time.Second, ReadHeaderTimeout: 2 * time.Second, WriteTimeout: 3 * time.Second, IdleTimeout: 4 * time.Second},
			[4]time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second}},
	} {
		e, err := New(tt.cfg, Deps{Store: st})
		if err != nil {
			t.Fatal(err)
		}
		got := [4]time.Duration{e.Server.ReadTimeout, e.Server.ReadHeaderTimeout, e.Server.WriteTimeout, e.Server.IdleTimeout}
		if got != tt.want {
			t.Fatalf("timeouts %v, want %v", got, tt.want)
		}
	}
	if _, err := New(Config{}, Deps{}); err == nil {
		t.Fatal("New without a store must fail")
	}
}
