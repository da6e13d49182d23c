package starter_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/examples"

	"github.com/cairn-io/cairn/internal/platform"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
)

// platformKinds defines pkger's kinds as http kinds over the platform, by
// data: labels, and buckets, dashboards and tasks that carry label
// associations as label mappings.
var platformKinds = func() string {
	b, err := examples.Files.ReadFile("platform/kinds/platform.yaml")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

func s1Label(name string) string {
	return `---
apiVersion: cairn/v1
kind: Label
metadata: {name: lucid_einstein}
spec: {name: ` + name + `}
`
}

func s1Bucket(withLabel bool) string {
	doc := `---
apiVersion: cairn/v1
kind: Bucket
metadata: {name: pristine_noir}
spec: {name: bucket_1}
`
	if withLabel {
		doc += "associations: [{kind: Label, name: lucid_einstein}]\n"
	}
	return doc
}

func s1Dashboard(withLabel bool) string {
	doc := `---
apiVersion: cairn/v1
kind: Dashboard
metadata: {name: charmed_saratoba}
spec: {name: dash_1}
`
	if withLabel {
		doc += "associations: [{kind: Label, name: lucid_einstein}]\n"
	}
	return doc
}

const s1Task = `---
apiVersion: cairn/v1
kind: Task
metadata: {name: alcord_mumphries}
spec: {name: task_1}
associations: [{kind: Label, name: lucid_einstein}]
`

type s1Platform struct {
	plat *platform.Platform
	url  string
}

func newS1Platform(t *testing.T) *s1Platform {
	t.Helper()
	p := platform.New()
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return &s1Platform{plat: p, url: srv.URL}
}

func (p *s1Platform) id(t *testing.T, coll, name string) string {
	t.Helper()
	obj, ok := p.plat.Find(coll, name)
	require.True(t, ok, "no %s named %q on the platform", coll, name)
	return obj["id"].(string)
}

// recordJSON renders a stack record the way pkger shows it.
func recordJSON(t *testing.T, rs []model.StackResource) string {
	t.Helper()
	b, err := json.MarshalIndent(rs, "", "  ")
	require.NoError(t, err)
	return string(b)
}

type res struct {
	kind, coll, name string
	assoc            []string // associated label pkgNames; nil = never had any
	emptyAssoc       bool     // "associations": []
}

func expectedRecord(t *testing.T, p *s1Platform, names map[string]string, rs ...res) string {
	t.Helper()
	var out []model.StackResource
	for _, r := range rs {
		sr := model.StackResource{Kind: r.kind, ID: p.id(t, r.coll, names[r.name]), PkgName: r.name}
		for _, a := range r.assoc {
			sr.Associations = append(sr.Associations, model.Association{Kind: "Label", PkgName: a})
		}
		if r.emptyAssoc {
			sr.Associations = []model.Association{}
		}
		out = append(out, sr)
	}
	return recordJSON(t, out)
}

// TestPkgerS1StackLifecycle reproduces pkger's S1 stack lifecycle, steps 1
// to 6, checking the stack record exactly after each step.
func TestPkgerS1StackLifecycle(t *testing.T) {
	p := newS1Platform(t)
	h := newHarness(t, harnessOptions{env: map[string]string{"PLATFORM_URL": p.url}})
	s := h.stack("S1")
	names := map[string]string{
		"lucid_einstein": "label_1", "pristine_noir": "bucket_1", "charmed_saratoba": "dash_1", "alcord_mumphries": "task_1",
	}
	label := res{kind: "Label", coll: "labels", name: "lucid_einstein"}
	bucket := res{kind: "Bucket", coll: "buckets", name: "pristine_noir", assoc: []string{"lucid_einstein"}}
	dash := res{kind: "Dashboard", coll: "dashboards", name: "charmed_saratoba", assoc: []string{"lucid_einstein"}}
	task := res{kind: "Task", coll: "tasks", name: "alcord_mumphries", assoc: []string{"lucid_einstein"}}
	pkg := func(parts ...string) string { return platformKinds + strings.Join(parts, "") }
	initial := pkg(s1Label("label_1"), s1Bucket(true), s1Dashboard(true))

	steps := []struct {
		name        string
		docs        string
		rename      string // the label's name on the platform after the step
		report      model.Report
		want        []res
		updatedMove bool
		check       func(t *testing.T)
	}{
		{
			name: "1 all resources created", docs: initial, rename: "label_1",
			report: model.Report{Created: 3}, want: []res{label, bucket, dash}, updatedMove: true,
			check: func(t *testing.T) {
				lid := p.id(t, "labels", "label_1")
				for _, c := range [][2]string{{"buckets", "bucket_1"}, {"dashboards", "dash_1"}} {
					m := p.plat.MappingsOf(c[0], p.id(t, c[0], c[1]))
					require.Len(t, m, 1, "%s label mappings = %v, want [%s]", c[1], m, lid)
					require.Equal(t, lid, m[0], "%s label mappings = %v, want [%s]", c[1], m, lid)
				}
			},
		},
		{
			name: "2 reapplied with no changes", docs: initial, rename: "label_1",
			report: model.Report{Unchanged: 3}, want: []res{label, bucket, dash},
		},
		{
			name: "3 label renamed", docs: pkg(s1Label("cool label name"), s1Bucket(true), s1Dashboard(true)), rename: "cool label name",
			report: model.Report{Updated: 1, Unchanged: 2}, want: []res{label, bucket, dash}, updatedMove: true,
		},
		{
			name: "4 task added", docs: pkg(s1Label("cool label name"), s1Bucket(true), s1Dashboard(true), s1Task), rename: "cool label name",
			report: model.Report{Created: 1, Unchanged: 3}, want: []res{label, bucket, dash, task}, updatedMove: true,
		},
		{
			name: "5 task removed", docs: pkg(s1Label("cool label name"), s1Bucket(true), s1Dashboard(true)), rename: "cool label name",
			report: model.Report{Deleted: 1, Unchanged: 3}, want: []res{label, bucket, dash}, updatedMove: true,
			check: func(t *testing.T) {
				require.Empty(t, p.plat.Tasks(), "task still on the platform")
			},
		},
		{
			name: "6 label and its associations removed", docs: pkg(s1Bucket(false), s1Dashboard(false)),
			report: model.Report{Updated: 2, Deleted: 1},
			want: []res{
				{kind: "Bucket", coll: "buckets", name: "pristine_noir", emptyAssoc: true},
				{kind: "Dashboard", coll: "dashboards", name: "charmed_saratoba", emptyAssoc: true},
			},
			updatedMove: true,
			check: func(t *testing.T) {
				require.Empty(t, p.plat.Labels(), "label still on the platform")
				for _, c := range [][2]string{{"buckets", "bucket_1"}, {"dashboards", "dash_1"}} {
					m := p.plat.MappingsOf(c[0], p.id(t, c[0], c[1]))
					require.Empty(t, m, "%s still has label mappings %v", c[1], m)
				}
			},
		},
	}
	before := h.getStack(s.ID)
	prevUpdated := before.UpdatedAt
	var ids map[string]string
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			time.Sleep(10 * time.Millisecond) // timestamps of consecutive steps differ
			e := h.apply(s.ID, st.docs, starter.StackRun{})
			mustStatus(t, e, model.ExecCompleted)
			wantReport(t, e.Report, st.report)
			if st.rename != "" {
				names["lucid_einstein"] = st.rename
			}
			rec := h.getStack(s.ID)
			want := expectedRecord(t, p, names, st.want...)
			got := recordJSON(t, rec.Resources)
			require.Equal(t, want, got, "stack record:\n%s\nwant:\n%s", got, want)
			moved := !rec.UpdatedAt.Equal(prevUpdated)
			require.Equal(t, st.updatedMove, moved, "updatedAt moved = %v (%v → %v), want %v", moved, prevUpdated, rec.UpdatedAt, st.updatedMove)
			require.True(t, rec.CreatedAt.Equal(before.CreatedAt), "createdAt changed: %v → %v", before.CreatedAt, rec.CreatedAt)
			// Object ids stay the same across steps: nothing is recreated.
			cur := map[string]string{}
			for _, r := range rec.Resources {
				cur[r.PkgName] = r.ID
			}
			for name, id := range ids {
				now, ok := cur[name]
				if ok {
					require.Equal(t, id, now, "%s was recreated: id %s → %s", name, id, now)
				}
			}
			ids = cur
			prevUpdated = rec.UpdatedAt
			if st.check != nil {
				st.check(t)
			}
		})
	}
}
