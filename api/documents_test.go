package api

import (
	"context"
	"database/sql"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/model"
)

const validPackageYAML = `apiVersion: cairn/v1
kind: Directory
metadata:
  name: etc
spec:
  path: /srv/app/etc
---
apiVersion: cairn/v1
kind: File
metadata:
  name: motd
spec:
  path: /srv/app/etc/motd
  content: {envRef: {key: MOTD, default: hello}}
  mode: "0644"
dependsOn: [Directory/etc]
`

// badDocument is one class of bad input: the body, its content type and
// the line (and path fragment) at least one detail must name.
type badDocument struct {
	name  string
	ctype string
	body  string
	line  int
	text  string // a detail message must contain this
}

var badPackages = []badDocument{
	{"malformed YAML", "application/yaml", "apiVersion: cairn/v1\nkind: File\nmetadata:\n  name: [unclosed\n", 4, "yaml"},
	{"malformed JSON", "application/json", "{\n  \"kind\": \"File\",\n  \"metadata\": {\"name\": \"x\"\n}\n", 5, "json"},
	{"malformed Jsonnet", "application/jsonnet", "local x = ;\n{kind: 'File'}\n", 1, "jsonnet"},
	{"Jsonnet import refused", "application/jsonnet", "local lib = import 'lib.libsonnet';\n[lib]\n", 1, "import"},
	{"unknown kind", "application/yaml", "apiVersion: cairn/v1\nkind: Fiel\nmetadata: {name: x}\nspec: {path: /x}\n", 2, "did you mean"},
	{"duplicate", "application/yaml", "kind: File\nmetadata: {name: x}\nspec: {path: /a}\n---\nkind: File\nmetadata: {name: x}\nspec: {path: /b}\n", 6, "x"},
	{"missing ref", "application/yaml", "kind: File\nmetadata: {name: x}\nspec: {path: /a}\ndependsOn: [Directory/nowhere]\n", 4, "nowhere"},
	{"cycle", "application/yaml", "kind: File\nmetadata: {name: a}\nspec: {path: /a}\ndependsOn: [File/b]\n---\nkind: File\nmetadata: {name: b}\nspec: {path: /b}\ndependsOn: [File/a]\n", 0, "cycle"},
	{"schema failure", "application/yaml", "kind: File\nmetadata: {name: x}\nspec:\n  path: /a\n  mode: rwx\n", 5, "mode"},
	{"unknown field", "application/yaml", "kind: File\nmetadata: {name: x}\nspec: {path: /a}\ndependson: [File/y]\n", 4, "dependsOn"},
	{"missing notify target", "application/yaml", "kind: File\nmetadata: {name: x}\nspec: {path: /a}\nnotify: [Exec/nowhere]\n", 4, "notifies exec/nowhere"},
	{"missing subscribe target", "application/yaml", "kind: Exec\nmetadata: {name: x}\nspec: {command: \"true\"}\nsubscribe: [File/nowhere]\n", 4, "subscribes to file/nowhere"},
}

func countSnapshots(t *testing.T, s *testServer, dbURL string) int {
	t.Helper()
	driver, dsn := "pgx", dbURL
	if p, ok := strings.CutPrefix(dbURL, "sqlite://"); ok {
		driver, dsn = "sqlite", p
	}
	db, err := sql.Open(driver, dsn)
	require.NoError(t, err)
	defer db.Close()
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM snapshots`).Scan(&n))
	return n
}

func TestValidatePackage(t *testing.T) {
	s := newTestServer(t, sqliteURL(t))
	t.Run("valid YAML", func(t *testing.T) {
		var sum model.PackageSummary
		s.do(http.MethodPost, "/v1/packages/validate", validPackageYAML, "Content-Type", "application/yaml").expect(t, http.StatusOK).json(t, &sum)
		require.Equal(t, 2, sum.Resources, "summary %+v", sum)
		require.Equal(t, 1, sum.Kinds["file"], "summary %+v", sum)
		require.Equal(t, 1, sum.Kinds["directory"], "summary %+v", sum)
		require.Len(t, sum.EnvRefs, 1, "summary %+v", sum)
		require.Equal(t, "MOTD", sum.EnvRefs[0], "summary %+v", sum)
		require.Equal(t, "directory/etc", sum.Items[1].DependsOn[0], "summary %+v", sum)
	})
	t.Run("same package as JSON and Jsonnet", func(t *testing.T) {
		jsonDoc := `[{"kind": "Directory", "metadata": {"name": "etc"}, "spec": {"path": "/srv/app/etc"}}]`
		jsonnetDoc := `local dir(name, path) = {kind: 'Directory', metadata: {name: name}, spec: {path: path}};
[dir('etc', '/srv/app/etc')]`
		for ctype, body := range map[string]string{"application/json": jsonDoc, "application/jsonnet": jsonnetDoc, "text/yaml": "kind: Directory\nmetadata: {name: etc}\nspec: {path: /srv/app/etc}\n"} {
			var sum model.PackageSummary
			s.do(http.MethodPost, "/v1/packages/validate", body, "Content-Type", ctype).expect(t, http.StatusOK).json(t, &sum)
			require.Equal(t, 1, sum.Resources, "%s: summary %+v", ctype, sum)
			require.Equal(t, "etc", sum.Items[0].Name, "%s: summary %+v", ctype, sum)
		}
	})
	t.Run("no or unknown content type", func(t *testing.T) {
		s.do(http.MethodPost, "/v1/packages/validate", validPackageYAML, "Content-Type", "").expect(t, http.StatusUnsupportedMediaType)
		s.do(http.MethodPost, "/v1/packages/validate", validPackageYAML, "Content-Type", "text/plain").expect(t, http.StatusUnsupportedMediaType)
	})
	t.Run("empty body", func(t *testing.T) {
		s.do(http.MethodPost, "/v1/packages/validate", "", "Content-Type", "application/yaml").expect(t, http.StatusBadRequest)
	})
	for _, tt := range badPackages {
		t.Run(tt.name, func(t *testing.T) {
			info := s.do(http.MethodPost, "/v1/packages/validate", tt.body, "Content-Type", tt.ctype).expect(t, http.StatusUnprocessableEntity).errorBody(t)
			checkDetails(t, info, tt)
		})
	}
	t.Run("every error at once", func(t *testing.T) {
		body := "kind: Fiel\nmetadata: {name: a}\nspec: {path: /a}\n---\nkind: File\nmetadata: {name: b}\nspec: {path: /b, mode: bad}\ndependsOn: [File/zzz]\n"
		info := s.do(http.MethodPost, "/v1/packages/validate", body, "Content-Type", "application/yaml").expect(t, http.StatusUnprocessableEntity).errorBody(t)
		require.GreaterOrEqual(t, len(info.Details), 3, "want the unknown kind, the schema failure and the missing ref together: %+v", info.Details)
		docs := map[int]bool{}
		for _, d := range info.Details {
			docs[d.Index] = true
			require.Equal(t, requestSource, d.Document, "detail names document")
		}
		require.True(t, docs[0], "details do not name both documents: %+v", info.Details)
		require.True(t, docs[1], "details do not name both documents: %+v", info.Details)
	})
}

// checkDetails asserts a detail is positioned at tt.line and mentions
// tt.text.
func checkDetails(t *testing.T, info model.ErrorInfo, tt badDocument) {
	t.Helper()
	require.NotEmpty(t, info.Details, "no details: %+v", info)
	for _, d := range info.Details {
		if (tt.line == 0 || d.Line == tt.line) && strings.Contains(strings.ToLower(d.Message+" "+d.Path), strings.ToLower(tt.text)) {
			return
		}
	}
	t.Fatalf("no detail at line %d mentioning %q: %+v", tt.line, tt.text, info.Details)
}

// TestBadPackagesStoreNothing sends every bad-input class to the routes
// that would store or run something: each answers 422 with positions, and
// no snapshot, stack change or execution follows.
func TestBadPackagesStoreNothing(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		dbURL := be.url(t)
		s := newTestServer(t, dbURL)
		var st model.StackRecord
		s.do(http.MethodPost, "/v1/stacks", map[string]any{"name": "s1"}).expect(t, http.StatusCreated).json(t, &st)
		for _, tt := range badPackages {
			for _, route := range []string{"apply", "dry-run"} {
				t.Run(tt.name+"/"+route, func(t *testing.T) {
					r := s.do(http.MethodPost, "/v1/stacks/"+st.ID+"/"+route, tt.body, "Content-Type", tt.ctype)
					info := r.expect(t, http.StatusUnprocessableEntity).errorBody(t)
					checkDetails(t, info, tt)
					if route == "dry-run" {
						var withSummary struct {
							Summary *model.PackageSummary `json:"summary"`
						}
						r.json(t, &withSummary)
						require.NotNil(t, withSummary.Summary, "dry-run 422 without the summary of what parsed: %s", r.Body)
					}
				})
			}
		}
		t.Run("apply of an empty package", func(t *testing.T) {
			info := s.do(http.MethodPost, "/v1/stacks/"+st.ID+"/apply", "---\n# nothing here\n", "Content-Type", "application/yaml").
				expect(t, http.StatusUnprocessableEntity).errorBody(t)
			checkDetails(t, info, badDocument{text: "no resources"})
		})
		n := countSnapshots(t, s, dbURL)
		require.Equal(t, 0, n, "%d snapshots stored from bad packages", n)
		got, err := s.Store.GetStack(context.Background(), st.ID)
		require.NoError(t, err, "stack changed: %+v %v", got, err)
		require.True(t, got.UpdatedAt.Equal(st.UpdatedAt), "stack changed: %+v %v", got, err)
		require.Empty(t, got.Resources, "stack changed: %+v %v", got, err)
	})
}

func TestSnapshotEncodingReadsBackTheSamePackage(t *testing.T) {
	doc := validPackageYAML + `---
apiVersion: cairn/v1
kind: Kind
metadata: {name: Label}
spec:
  base: http
  wrap: body
  defaults: {url: "http://127.0.0.1:1", path: /api/v2/labels}
  schema: {type: object, properties: {name: {type: string}, ratio: {type: number}}}
  attributes: {name: property}
---
apiVersion: cairn/v1
kind: Label
metadata: {name: l1}
spec: {name: label_1, ratio: 2.0}
---
apiVersion: cairn/v1
kind: Exec
metadata: {name: run}
spec: {command: "echo hi", timeout: 30}
target: {roles: [web]}
meta: {retry: 2, delay: 1s}
associations: [{kind: Label, name: l1}]
subscribe: [File/motd]
---
apiVersion: cairn/v1
kind: Exec
metadata: {name: reload}
spec: {command: "echo reload", refreshOnly: true}
---
apiVersion: cairn/v1
kind: Label
metadata: {name: l2}
spec: {name: label_2}
notify: [Exec/reload, Exec/run]
`
	first, err := graphs.Parse(graphs.Options{}, graphs.Source{Name: "in", Data: []byte(doc), Format: graphs.FormatYAML})
	require.NoError(t, err)
	for _, format := range []string{"json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			enc, err := encodePackage(first.Kinds, first.Package.Resources, format)
			require.NoError(t, err)
			f := graphs.FormatJSON
			if format == "yaml" {
				f = graphs.FormatYAML
			}
			again, err := graphs.Parse(graphs.Options{}, graphs.Source{Name: "snapshot", Data: enc, Format: f})
			require.NoError(t, err, "encoded package does not parse: %v\n%s", err, enc)
			require.Len(t, again.Kinds, 1, "kinds")
			require.Equal(t, "Label", again.Kinds[0].Name, "kinds %+v", again.Kinds)
			enc2, err := encodePackage(again.Kinds, again.Package.Resources, format)
			require.NoError(t, err)
			require.Equal(t, string(enc2), string(enc), "not stable:\n%s\n---\n%s", enc, enc2)
			for i, r := range again.Package.Resources {
				want := first.Package.Resources[i]
				require.Equal(t, want.Ref(), r.Ref(), "resource %d: %+v, want %+v", i, r, want)
				require.Len(t, r.DependsOn, len(want.DependsOn), "resource %d: %+v, want %+v", i, r, want)
				require.Len(t, r.Associations, len(want.Associations), "resource %d: %+v, want %+v", i, r, want)
				require.Equal(t, want.Meta, r.Meta, "resource %d: %+v, want %+v", i, r, want)
				require.Equal(t, want.Notify, r.Notify, "resource %d", i)
				require.Equal(t, want.Subscribe, r.Subscribe, "resource %d", i)
			}
			label := again.Package.Lookup(model.Ref{Kind: "Label", Name: "l1"})
			_, isFloat := label.Spec["ratio"].(float64)
			require.True(t, isFloat, "2.0 came back as %T", label.Spec["ratio"])
		})
	}
}
