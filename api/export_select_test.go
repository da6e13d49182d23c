package api

import (
	"context"
	"net/http"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// infraPackage is a pkger stack: labels and the buckets mapped to them.
const infraPackage = `apiVersion: cairn/v1
kind: Label
metadata: {name: prod}
spec: {name: production}
---
apiVersion: cairn/v1
kind: Label
metadata: {name: dev}
spec: {name: development}
---
apiVersion: cairn/v1
kind: Bucket
metadata: {name: logs}
spec:
  name: logs
  associations: [{kind: Label, name: prod}]
---
apiVersion: cairn/v1
kind: Bucket
metadata: {name: tmp}
spec:
  name: tmp
  associations: [{kind: Label, name: dev}]
---
apiVersion: cairn/v1
kind: Bucket
metadata: {name: metrics}
spec: {name: metrics}
dependsOn: [Bucket/logs]
`

const appPackage = `apiVersion: cairn/v1
kind: File
metadata: {name: motd}
spec: {path: /srv/app/motd, content: hello}
`

// recordStack creates a stack that last applied pkg and records refs.
func recordStack(t *testing.T, s *testServer, name, pkg string, refs ...string) string {
	t.Helper()
	ctx := context.Background()
	st := &model.Stack{Name: name}
	require.NoError(t, s.Store.CreateStack(ctx, st))
	hash, err := s.Store.PutSnapshot(ctx, SnapshotPackage, []byte(pkg))
	require.NoError(t, err)
	var res []model.StackResource
	for _, r := range refs {
		ref, ok := model.ParseRef(r)
		require.True(t, ok, r)
		res = append(res, model.StackResource{Kind: ref.Kind, ID: "id-" + ref.Name, PkgName: ref.Name})
	}
	_, err = s.Store.WriteStackRecord(ctx, st.ID, "exec-"+name, res, hash, "", true)
	require.NoError(t, err)
	return st.ID
}

// exported posts an export request and lists what came back as
// kind/name with its dependsOn.
func exported(t *testing.T, s *testServer, req model.ExportRequest, want int) (map[string][]string, *response) {
	t.Helper()
	r := s.do(http.MethodPost, "/v1/export?format=json", req).expect(t, want)
	if want != http.StatusOK {
		return nil, r
	}
	var docs []struct {
		Kind      string `json:"kind"`
		Metadata  struct{ Name string }
		DependsOn []string `json:"dependsOn"`
	}
	r.json(t, &docs)
	out := map[string][]string{}
	for _, d := range docs {
		out[d.Kind+"/"+d.Metadata.Name] = d.DependsOn
	}
	return out, r
}

func keys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestExportSelectors(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) { testExportSelectors(t, be.url(t)) })
}

func testExportSelectors(t *testing.T, dbURL string) {
	cat := kinds.Builtin()
	defined, err := kinds.LoadDir("../examples/platform/kinds")
	require.NoError(t, err)
	require.NoError(t, cat.AddAll(defined))
	s := newTestServer(t, dbURL, withDeps(func(d *Deps) { d.Catalogue = cat }))
	infra := recordStack(t, s, "infra", infraPackage, "Label/prod", "Label/dev", "Bucket/logs", "Bucket/tmp", "Bucket/metrics")
	app := recordStack(t, s, "app", appPackage, "File/motd")

	tests := []struct {
		name string
		req  model.ExportRequest
		want []string
	}{
		{"a label by its name", model.ExportRequest{Labels: []string{"production"}}, []string{"Bucket/logs", "Label/prod"}},
		{"a label by its metadata name", model.ExportRequest{Labels: []string{"dev"}}, []string{"Bucket/tmp", "Label/dev"}},
		{"resource ids across stacks bring their labels", model.ExportRequest{Resources: []string{"file/motd", "Bucket/tmp"}}, []string{"Bucket/tmp", "Label/dev", "file/motd"}},
		{"labels and resource ids together", model.ExportRequest{Labels: []string{"production"}, Resources: []string{"file/motd"}}, []string{"Bucket/logs", "Label/prod", "file/motd"}},
		{"everything", model.ExportRequest{All: true}, []string{"Bucket/logs", "Bucket/metrics", "Bucket/tmp", "Label/dev", "Label/prod", "file/motd"}},
		{"one stack", model.ExportRequest{StackID: app}, []string{"file/motd"}},
		{"a label inside one stack", model.ExportRequest{StackID: app, Labels: []string{"production"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := exported(t, s, tt.req, http.StatusOK)
			if tt.want == nil {
				assert.Empty(t, got)
				return
			}
			assert.Equal(t, tt.want, keys(got))
		})
	}

	t.Run("dependsOn outside the selection is dropped", func(t *testing.T) {
		got, _ := exported(t, s, model.ExportRequest{Resources: []string{"Bucket/metrics"}}, http.StatusOK)
		assert.Equal(t, []string{"Bucket/metrics"}, keys(got))
		assert.Empty(t, got["Bucket/metrics"])
		got, _ = exported(t, s, model.ExportRequest{StackID: infra}, http.StatusOK)
		assert.Len(t, got, 5)
		assert.Equal(t, []string{"Bucket/logs"}, got["Bucket/metrics"], "kept when the dependency is exported too")
	})

	errs := []struct {
		name   string
		req    model.ExportRequest
		status int
		path   string
	}{
		{"unknown resource", model.ExportRequest{Resources: []string{"Bucket/nope"}}, http.StatusNotFound, "resources[0]"},
		{"not kind/name", model.ExportRequest{Resources: []string{"nope"}}, http.StatusNotFound, "resources[0]"},
		{"all and a stack", model.ExportRequest{All: true, StackID: app}, http.StatusBadRequest, "all"},
		{"labels and kinds", model.ExportRequest{Labels: []string{"production"}, Kinds: []string{"file"}}, http.StatusBadRequest, "stackId"},
		{"unknown stack", model.ExportRequest{StackID: "nope", Labels: []string{"production"}}, http.StatusNotFound, ""},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			_, r := exported(t, s, tt.req, tt.status)
			if tt.path != "" {
				body := r.errorBody(t)
				require.NotEmpty(t, body.Details)
				assert.Equal(t, tt.path, body.Details[0].Path)
			}
		})
	}

	t.Run("a resource two stacks record", func(t *testing.T) {
		recordStack(t, s, "copy", appPackage, "File/motd")
		_, r := exported(t, s, model.ExportRequest{All: true}, http.StatusConflict)
		assert.Contains(t, r.errorBody(t).Details[0].Message, "file/motd is recorded by stacks")
		got, _ := exported(t, s, model.ExportRequest{Labels: []string{"production"}}, http.StatusOK)
		assert.Equal(t, []string{"Bucket/logs", "Label/prod"}, keys(got), "only selected resources must be unique")
	})
}
