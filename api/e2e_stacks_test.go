package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/examples"
	"github.com/cairn-io/cairn/internal/platform"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
)

// platformKinds defines pkger's kinds by data: http objects on the
// platform, with label associations kept as label mappings.
var platformKinds = func() string {
	b, err := examples.Files.ReadFile("platform/kinds/platform.yaml")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// The S1 package's documents, as in pkger's stack documentation (with its
// "metadta" typo and tab indentation fixed, and associations spelled the
// pkger way, inside spec).
func s1Label(name string) string {
	return "---\nkind: Label\nmetadata:\n  name: lucid_einstein\nspec:\n  name: " + name + "\n"
}

func s1Resource(kind, pkgName, name string, withLabel bool) string {
	doc := "---\nkind: " + kind + "\nmetadata:\n  name: " + pkgName + "\nspec:\n  name: " + name + "\n"
	if withLabel {
		doc += "  association:\n    - kind: Label\n      name: lucid_einstein\n"
	}
	return doc
}

type platformServer struct {
	plat *platform.Platform
	url  string
}

func newPlatform(t *testing.T) *platformServer {
	p := platform.New()
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return &platformServer{plat: p, url: srv.URL}
}

func (p *platformServer) id(t *testing.T, coll, name string) string {
	t.Helper()
	obj, ok := p.plat.Find(coll, name)
	require.True(t, ok, "no %s named %q on the platform", coll, name)
	return obj["id"].(string)
}

// stackJSON is a stack record as GET /v1/stacks/{id} answers it, raw.
func (h *cairn) stackJSON(id string) map[string]json.RawMessage {
	h.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, h.url+"/v1/stacks/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+h.token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(h.t, err)
	defer resp.Body.Close()
	var raw map[string]json.RawMessage
	err = json.NewDecoder(resp.Body).Decode(&raw)
	require.NoError(h.t, err, "GET stack: %d %v", resp.StatusCode, err)
	require.Equal(h.t, http.StatusOK, resp.StatusCode, "GET stack: %d %v", resp.StatusCode, err)
	return raw
}

func compact(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	out, _ := json.Marshal(v)
	return string(out)
}

// TestE2EPkgerS1StackLifecycleOverHTTP runs pkger's S1 lifecycle, steps 1
// to 6, through the HTTP API as a user would (with the Go client), and
// checks the stack record GET /v1/stacks/{id} answers after each step
// against the records of pkger's documentation: stack_id, config {},
// createdAt fixed, updatedAt moving only on change, the resources with
// their ids and associations (left out when never had, [] when removed).
func TestE2EPkgerS1StackLifecycleOverHTTP(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			p := newPlatform(t)
			h := newCairn(t, cairnOptions{dbURL: be.url(t), env: map[string]string{"PLATFORM_URL": p.url}})
			ctx := ctxTimeout(t, 5*time.Minute)
			st, err := h.client.CreateStack(ctx, model.StackInput{Name: "S1", Description: "pkger S1"})
			require.NoError(t, err)
			created := h.stackJSON(st.ID)
			require.Equal(t, `"`+st.ID+`"`, string(created["stack_id"]), "new stack record: %s %s %s", created["stack_id"], created["config"], created["resources"])
			require.Equal(t, "{}", string(created["config"]), "new stack record: %s %s %s", created["stack_id"], created["config"], created["resources"])
			require.Equal(t, "[]", string(created["resources"]), "new stack record: %s %s %s", created["stack_id"], created["config"], created["resources"])

			pkg := func(parts ...string) string { return platformKinds + strings.Join(parts, "") }
			initial := pkg(s1Label("label_1"), s1Resource("Bucket", "pristine_noir", "bucket_1", true), s1Resource("Dashboard", "charmed_saratoba", "dash_1", true))
			renamed := pkg(s1Label("cool label name"), s1Resource("Bucket", "pristine_noir", "bucket_1", true), s1Resource("Dashboard", "charmed_saratoba", "dash_1", true))
			withTask := renamed + s1Resource("Task", "alcord_mumphries", "task_1", true)
			noLabel := pkg(s1Resource("Bucket", "pristine_noir", "bucket_1", false), s1Resource("Dashboard", "charmed_saratoba", "dash_1", false))

			type res struct {
				kind, coll, pkgName string
				assoc               string // "" none, "label", "empty"
			}
			label := res{"Label", "labels", "lucid_einstein", ""}
			bucket := res{"Bucket", "buckets", "pristine_noir", "label"}
			dash := res{"Dashboard", "dashboards", "charmed_saratoba", "label"}
			task := res{"Task", "tasks", "alcord_mumphries", "label"}
			names := map[string]string{"lucid_einstein": "label_1", "pristine_noir": "bucket_1", "charmed_saratoba": "dash_1", "alcord_mumphries": "task_1"}
			record := func(rs ...res) string {
				var out []model.StackResource
				for _, r := range rs {
					sr := model.StackResource{Kind: r.kind, ID: p.id(t, r.coll, names[r.pkgName]), PkgName: r.pkgName}
					switch r.assoc {
					case "label":
						sr.Associations = []model.Association{{Kind: "Label", PkgName: "lucid_einstein"}}
					case "empty":
						sr.Associations = []model.Association{}
					}
					out = append(out, sr)
				}
				b, _ := json.Marshal(out)
				return string(b)
			}
			steps := []struct {
				name   string
				docs   string
				label  string
				report model.Report
				want   []res
				moves  bool
			}{
				{"1 all new resources applied", initial, "label_1", model.Report{Created: 3}, []res{label, bucket, dash}, true},
				{"2 reapplied with no changes", initial, "label_1", model.Report{Unchanged: 3}, []res{label, bucket, dash}, false},
				{"3 label renamed", renamed, "cool label name", model.Report{Updated: 1, Unchanged: 2}, []res{label, bucket, dash}, true},
				{"4 task added", withTask, "cool label name", model.Report{Created: 1, Unchanged: 3}, []res{label, bucket, dash, task}, true},
				{"5 task removed", renamed, "cool label name", model.Report{Deleted: 1, Unchanged: 3}, []res{label, bucket, dash}, true},
				{"6 label and its associations removed", noLabel, "", model.Report{Updated: 2, Deleted: 1},
					[]res{{"Bucket", "buckets", "pristine_noir", "empty"}, {"Dashboard", "dashboards", "charmed_saratoba", "empty"}}, true},
			}
			prev := created
			for _, step := range steps {
				t.Run(step.name, func(t *testing.T) {
					time.Sleep(10 * time.Millisecond)
					ex := h.applyWait(st.ID, step.docs, client.ApplyOptions{})
					mustStatus(t, ex, model.ExecCompleted)
					wantReport(t, ex.Report, step.report)
					if step.label != "" {
						names["lucid_einstein"] = step.label
					}
					rec := h.stackJSON(st.ID)
					got, want := string(rec["resources"]), record(step.want...)
					require.Equal(t, want, got, "stack record resources:\n%s\nwant:\n%s", got, want)
					require.Equal(t, `"`+st.ID+`"`, string(rec["stack_id"]), "stack_id %s config %s", rec["stack_id"], rec["config"])
					require.Equal(t, "{}", string(rec["config"]), "stack_id %s config %s", rec["stack_id"], rec["config"])
					require.Equal(t, string(created["createdAt"]), string(rec["createdAt"]), "createdAt moved: %s → %s", created["createdAt"], rec["createdAt"])
					moved := string(rec["updatedAt"]) != string(prev["updatedAt"])
					require.Equal(t, step.moves, moved, "updatedAt moved = %v (%s → %s), want %v", moved, prev["updatedAt"], rec["updatedAt"], step.moves)
					prev = rec
				})
			}
			require.Empty(t, p.plat.Labels(), "platform after step 6: labels %v tasks %v", p.plat.Labels(), p.plat.Tasks())
			require.Empty(t, p.plat.Tasks(), "platform after step 6: labels %v tasks %v", p.plat.Labels(), p.plat.Tasks())
		})
	}
}

// TestE2ERollbackIsByteExact applies over HTTP a package whose last step
// fails: the answer is the rolled-back execution and files, modes and the
// platform are exactly as before, the stack record untouched.
func TestE2ERollbackIsByteExact(t *testing.T) {
	p := newPlatform(t)
	h := newCairn(t, cairnOptions{env: map[string]string{"PLATFORM_URL": p.url}})
	ctx := ctxTimeout(t, 3*time.Minute)
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "app"), 0o755))
	motd := filepath.Join(root, "app", "motd")
	require.NoError(t, os.WriteFile(motd, []byte("old bytes\x00\xff\n"), 0o600))
	require.NoError(t, os.Chmod(motd, 0o600))
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "rollback"})
	require.NoError(t, err)
	mustStatus(t, h.applyWait(st.ID, platformKinds+s1Label("label_1")+s1Resource("Bucket", "pristine_noir", "bucket_1", true), client.ApplyOptions{}), model.ExecCompleted)
	recBefore := h.stackJSON(st.ID)
	platBefore := p.plat.Snapshot()
	filesBefore := testenv.Tree(t, root)

	failing := platformKinds + s1Label("renamed") + s1Resource("Bucket", "pristine_noir", "bucket_1", false) +
		s1Resource("Dashboard", "charmed_saratoba", "dash_1", true) + fmt.Sprintf(`---
kind: File
metadata: {name: motd}
spec: {path: %[1]s/app/motd, content: "new\n", mode: "0644"}
---
kind: Directory
metadata: {name: sub}
spec: {path: %[1]s/app/sub}
---
kind: File
metadata: {name: inner}
spec: {path: %[1]s/app/sub/inner, content: "x"}
---
kind: Exec
metadata: {name: migrate}
spec: {command: "echo failing >&2; exit 3"}
dependsOn: [File/motd, File/inner, Label/lucid_einstein, Dashboard/charmed_saratoba, Bucket/pristine_noir]
`, root)
	ex := h.applyWait(st.ID, failing, client.ApplyOptions{})
	mustStatus(t, ex, model.ExecRolledBack)
	require.NotNil(t, ex.Report, "report %+v", ex.Report)
	require.True(t, ex.Report.RolledBack, "report %+v", ex.Report)
	require.Equal(t, 1, ex.Report.Failed, "report %+v", ex.Report)
	require.Empty(t, ex.Report.CompensationFailures, "report %+v", ex.Report)
	require.Contains(t, ex.Error, "migrate", "error %q does not name the failed step", ex.Error)
	after := testenv.Tree(t, root)
	require.Len(t, after, len(filesBefore), "files after rollback %v, want %v", after, filesBefore)
	for p, want := range filesBefore {
		require.Equal(t, want, after[p], "%s = %q, want %q", p, after[p], want)
	}
	got := p.plat.Snapshot()
	require.True(t, jsonEqual(got, platBefore), "platform after rollback:\n%s\nwant:\n%s", got, platBefore)
	recAfter := h.stackJSON(st.ID)
	require.Equal(t, compact(t, recBefore["resources"]), compact(t, recAfter["resources"]), "a rolled-back apply changed the stack record: %s", recAfter["resources"])
	require.Equal(t, string(recBefore["updatedAt"]), string(recAfter["updatedAt"]), "a rolled-back apply changed the stack record: %s", recAfter["resources"])
}

func filesPackage(dir, motd string) string {
	return fmt.Sprintf(`kind: Directory
metadata: {name: app}
spec: {path: %[1]s/app, mode: "0750"}
---
kind: File
metadata: {name: motd}
spec: {path: %[1]s/app/motd, content: %[2]q, mode: "0640"}
---
kind: File
metadata: {name: conf}
spec: {path: %[1]s/app/app.conf, template: "port = {{ .vars.port }}\n", vars: {port: 80}}
`, dir, motd)
}

// TestE2EExportRoundTrip exports a stack's resources and the files of a
// directory as packages; each, applied to a new stack, changes nothing.
func TestE2EExportRoundTrip(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 3*time.Minute)
	root := t.TempDir()
	a, err := h.client.CreateStack(ctx, model.StackInput{Name: "a"})
	require.NoError(t, err)
	mustStatus(t, h.applyWait(a.ID, filesPackage(root, "hello\n"), client.ApplyOptions{}), model.ExecCompleted)
	// Drift: the file changes behind Cairn's back; the export shows it.
	require.NoError(t, os.WriteFile(filepath.Join(root, "app", "motd"), []byte("edited by hand\n"), 0o640))
	before := testenv.Tree(t, root)

	for _, tc := range []struct {
		name   string
		req    model.ExportRequest
		format string
		count  int
	}{
		{"stack as YAML", model.ExportRequest{StackID: a.ID}, "yaml", 3},
		{"stack as JSON", model.ExportRequest{StackID: a.ID}, "json", 3},
		{"kinds by selector", model.ExportRequest{Kinds: []string{"file", "directory"}, Selector: &model.ExportSelector{Dir: root, Recursive: true}}, "yaml", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := h.client.Export(ctx, tc.req, tc.format)
			require.NoError(t, err)
			require.Contains(t, string(data), "edited by hand", "export does not show the current state:\n%s", data)
			require.NotContains(t, string(data), "hello", "export does not show the current state:\n%s", data)
			sum, err := h.client.Validate(ctx, client.Document{Data: data, Format: tc.format})
			require.NoError(t, err, "exported package is invalid: %v\n%s", err, data)
			require.Equal(t, tc.count, sum.Resources, "exported %d resources, want %d:\n%s", sum.Resources, tc.count, data)
			b, err := h.client.CreateStack(ctx, model.StackInput{Name: "b-" + tc.format})
			require.NoError(t, err)
			plan, _, err := h.client.DryRun(ctx, b.ID, &client.Document{Data: data, Format: tc.format}, client.DryRunOptions{})
			require.NoError(t, err)
			require.False(t, plan.Summary.Changes(), "plan of the exported package changes something: %+v\n%+v", plan.Summary, plan.Diff)
			ex, err := h.client.Apply(ctx, b.ID, &client.Document{Data: data, Format: tc.format}, client.ApplyOptions{Wait: true})
			require.NoError(t, err)
			mustStatus(t, ex, model.ExecCompleted)
			wantReport(t, ex.Report, model.Report{Unchanged: tc.count})
			after := testenv.Tree(t, root)
			for p, want := range before {
				require.Equal(t, want, after[p], "%s changed: %q → %q", p, want, after[p])
			}
		})
	}
}

// TestE2EApplyJsonnetPackage applies a self-contained Jsonnet package over
// HTTP. The snapshot the executor reads holds the evaluated JSON, so no
// worker evaluates a program posted to the API.
func TestE2EApplyJsonnetPackage(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 2*time.Minute)
	root := t.TempDir()
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "jsonnet"})
	require.NoError(t, err)
	prog := fmt.Sprintf(`local file(name, text) = {kind: 'File', metadata: {name: name}, spec: {path: '%s/' + name, content: text}};
[file('f%%d' %% i, std.toString(i * i)) for i in std.range(1, 3)]`, root)
	ex, err := h.client.Apply(ctx, st.ID, &client.Document{Data: []byte(prog), Format: "jsonnet"}, client.ApplyOptions{Wait: true})
	require.NoError(t, err)
	mustStatus(t, ex, model.ExecCompleted)
	wantReport(t, ex.Report, model.Report{Created: 3})
	b, _ := os.ReadFile(filepath.Join(root, "f3"))
	require.Equal(t, "9", string(b), "f3 = %q", b)
	rec, err := h.store.GetStack(ctx, st.ID)
	require.NoError(t, err)
	snap, err := h.store.GetSnapshot(ctx, rec.SnapshotHash)
	require.NoError(t, err)
	var content struct {
		Sources []struct {
			Name, Format, Data string
		} `json:"sources"`
	}
	err = json.Unmarshal(snap.Content, &content)
	require.NoError(t, err, "snapshot %s (%v)", snap.Content, err)
	require.Len(t, content.Sources, 1, "snapshot %s (%v)", snap.Content, err)
	require.Equal(t, "json", content.Sources[0].Format, "snapshot %s (%v)", snap.Content, err)
	require.NotContains(t, content.Sources[0].Data, "std.range", "snapshot %s (%v)", snap.Content, err)
}
