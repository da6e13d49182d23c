package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func TestStacksCRUD(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		s := newTestServer(t, be.url(t))
		r := s.do(http.MethodPost, "/v1/stacks", map[string]any{"name": "S1", "description": "first", "urls": []string{"https://example.com/pkg.yaml"}}).expect(t, http.StatusCreated)
		var raw map[string]json.RawMessage
		r.json(t, &raw)
		var rec model.StackRecord
		r.json(t, &rec)
		require.NotEmpty(t, rec.ID, "record %+v", rec)
		require.Equal(t, rec.ID, rec.StackID, "record %+v", rec)
		require.Equal(t, "S1", rec.Name, "record %+v", rec)
		require.Equal(t, "https://example.com/pkg.yaml", rec.URLs[0], "record %+v", rec)
		require.False(t, rec.CreatedAt.IsZero(), "record %+v", rec)
		require.True(t, rec.UpdatedAt.Equal(rec.CreatedAt), "record %+v", rec)
		require.Equal(t, "{}", string(raw["config"]), "config %s resources %s", raw["config"], raw["resources"])
		require.Equal(t, "[]", string(raw["resources"]), "config %s resources %s", raw["config"], raw["resources"])
		require.Equal(t, "/v1/stacks/"+rec.ID, r.Header.Get("Location"), "Location")
		s.do(http.MethodPost, "/v1/stacks", map[string]any{"name": "S2"}).expect(t, http.StatusCreated)

		var got model.StackRecord
		s.do(http.MethodGet, "/v1/stacks/"+rec.ID, nil).expect(t, http.StatusOK).json(t, &got)
		require.Equal(t, rec.ID, got.ID, "got %+v", got)
		require.Equal(t, "first", got.Description, "got %+v", got)
		var list struct {
			Stacks []model.StackRecord `json:"stacks"`
		}
		s.do(http.MethodGet, "/v1/stacks", nil).expect(t, http.StatusOK).json(t, &list)
		require.Len(t, list.Stacks, 2, "list %+v", list)
		s.do(http.MethodGet, "/v1/stacks?name=S2", nil).expect(t, http.StatusOK).json(t, &list)
		require.Len(t, list.Stacks, 1, "list ?name=S2 %+v", list)
		require.Equal(t, "S2", list.Stacks[0].Name, "list ?name=S2 %+v", list)
		s.do(http.MethodGet, "/v1/stacks?name=nobody", nil).expect(t, http.StatusOK).json(t, &list)
		require.Empty(t, list.Stacks, "list ?name=nobody %+v", list)
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
		require.Len(t, list.Stacks, 2, "bad input created stacks: %+v", list)
	})
}

// TestWithoutTemporal checks the routes that need Temporal answer 503 in
// the error shape when the server has none, after validating what they
// can: a bad package is still 422, a missing stack still 404.
func TestWithoutTemporal(t *testing.T) {
	s := newTestServer(t, sqliteURL(t))
	var rec model.StackRecord
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
			require.Contains(t, body, want, "metrics lack %q:\n%s", want, body)
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
		require.Contains(t, body, "temporal_request 1", "metrics")
		require.Contains(t, body, `cairn_http_requests_total{method="GET",route="/healthz",status="200"} 1`, "metrics")
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
		require.NoError(t, err)
		got := [4]time.Duration{e.Server.ReadTimeout, e.Server.ReadHeaderTimeout, e.Server.WriteTimeout, e.Server.IdleTimeout}
		require.Equal(t, tt.want, got, "timeouts")
	}
	_, err := New(Config{}, Deps{})
	require.Error(t, err, "New without a store must fail")
}
