package providers

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// localRegistry is a registry of the local kinds over the built-in catalogue.
func localRegistry(t testing.TB) *Registry {
	t.Helper()
	return localRegistryWith(kinds.Builtin())
}

func localRegistryWith(cat *kinds.Catalogue) *Registry {
	r := NewRegistry(cat)
	for _, p := range LocalProviders() {
		r.Register(p)
	}
	return r
}

// localNode is a local node rooted in a fresh temporary directory.
func localNode(t testing.TB) Node {
	t.Helper()
	return Node{Name: "node-1", Root: t.TempDir()}
}

// entrySnap is one filesystem entry as a test compares it.
type entrySnap struct {
	Type string // file, dir, symlink
	Mode string
	Data string // a file's bytes, a symlink's target
}

// snapshot records every entry under root, byte for byte.
func snapshot(t testing.TB, root string) map[string]entrySnap {
	t.Helper()
	out := map[string]entrySnap{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		e := entrySnap{Mode: formatMode(unixMode(fi.Mode()))}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			e.Type = "symlink"
			e.Data, err = os.Readlink(p)
		case fi.IsDir():
			e.Type = "dir"
		default:
			e.Type = "file"
			var b []byte
			b, err = os.ReadFile(p)
			e.Data = string(b)
		}
		out[rel] = e
		return err
	})
	require.NoError(t, err)
	return out
}

// jsonRoundTrip passes a change through JSON, as persisting it does.
func jsonRoundTrip(t testing.TB, ch Change) Change {
	t.Helper()
	raw, err := json.Marshal(ch)
	require.NoError(t, err)
	var out Change
	require.NoError(t, json.Unmarshal(raw, &out))
	return out
}

func changedPaths(ch Change) []string {
	var out []string
	for _, c := range ch.Changes {
		out = append(out, c.Path)
	}
	return out
}

// lifecycleCase is one Converge from a prepared state, checked for noop,
// apply, idempotency and compensation.
type lifecycleCase struct {
	name        string
	setup       func(t *testing.T, root string)
	kind        string
	spec        model.Spec
	delete      bool
	objectID    string
	wantAction  model.Action
	wantOutcome model.Outcome
	wantChanges []string
	check       func(t *testing.T, root string, ch Change)
}

func runLifecycle(t *testing.T, tests []lifecycleCase) {
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := localRegistry(t)
			node := localNode(t)
			if tt.setup != nil {
				tt.setup(t, node.Root)
			}
			before := snapshot(t, node.Root)
			req := Request{Kind: tt.kind, Name: "res", Spec: tt.spec, Node: node, Delete: tt.delete, ObjectID: tt.objectID}

			// Noop reads and diffs, reports the would-be action, changes nothing.
			noopReq := req
			noopReq.Noop = true
			nch, err := r.Converge(ctx, noopReq)
			require.NoError(t, err, "noop converge")
			require.Equal(t, tt.wantAction, nch.Action, "noop: action %q outcome %q noop %v; want %q, unchanged, true", nch.Action, nch.Outcome, nch.Noop, tt.wantAction)
			require.Equal(t, model.OutcomeUnchanged, nch.Outcome, "noop: action %q outcome %q noop %v; want %q, unchanged, true", nch.Action, nch.Outcome, nch.Noop, tt.wantAction)
			assert.True(t, nch.Noop, "noop: action %q outcome %q noop %v; want %q, unchanged, true", nch.Action, nch.Outcome, nch.Noop, tt.wantAction)
			if tt.wantAction != model.ActionNoop {
				assert.True(t, strings.HasSuffix(nch.Report, "(noop)"), "noop report %q does not say noop", nch.Report)
			}
			got := snapshot(t, node.Root)
			require.Equal(t, before, got, "noop changed the filesystem:\nbefore %v\nafter  %v", before, got)

			ch, err := r.Converge(ctx, req)
			require.NoError(t, err, "converge")
			require.Equal(t, tt.wantAction, ch.Action, "action %q outcome %q; want %q %q (report %q)", ch.Action, ch.Outcome, tt.wantAction, tt.wantOutcome, ch.Report)
			assert.Equal(t, tt.wantOutcome, ch.Outcome, "action %q outcome %q; want %q %q (report %q)", ch.Action, ch.Outcome, tt.wantAction, tt.wantOutcome, ch.Report)
			assert.True(t, slices.Equal(changedPaths(ch), tt.wantChanges), "changes %v, want %v", changedPaths(ch), tt.wantChanges)
			assert.True(t, strings.HasPrefix(ch.Report, tt.kind+"/res: "), "report %q does not name the resource", ch.Report)
			if tt.check != nil {
				tt.check(t, node.Root, ch)
			}
			applied := snapshot(t, node.Root)

			// Applying a converged resource is a noop.
			again, err := r.Converge(ctx, req)
			require.NoError(t, err, "second converge")
			require.Equal(t, model.ActionNoop, again.Action, "second converge: action %q outcome %q, want noop/unchanged (%s)", again.Action, again.Outcome, again.Report)
			assert.Equal(t, model.OutcomeUnchanged, again.Outcome, "second converge: action %q outcome %q, want noop/unchanged (%s)", again.Action, again.Outcome, again.Report)
			got = snapshot(t, node.Root)
			assert.Equal(t, applied, got, "second converge changed the filesystem")

			// Compensating from the persisted change restores the state
			// byte for byte, and doing it twice is doing it once.
			persisted := jsonRoundTrip(t, ch)
			for i := range 2 {
				err := r.Compensate(ctx, req, persisted)
				require.NoError(t, err, "compensate #%d: %v", i+1, err)
				got := snapshot(t, node.Root)
				require.Equal(t, before, got, "compensate #%d did not restore the state:\nbefore %v\nafter  %v", i+1, before, got)
			}
			// A noop change needs no compensation.
			require.NoError(t, r.Compensate(ctx, req, jsonRoundTrip(t, nch)), "compensate noop change")
		})
	}
}

func TestFileLifecycle(t *testing.T) {
	binary := []byte{0, 1, 2, 0xff, 0xfe, '\n', 0x80, 0}
	existing := func(data string, mode os.FileMode) func(t *testing.T, root string) {
		return func(t *testing.T, root string) {
			mustMkdir(t, filepath.Join(root, "etc"))
			mustWrite(t, filepath.Join(root, "etc", "motd"), []byte(data), mode)
		}
	}
	etcOnly := func(t *testing.T, root string) { mustMkdir(t, filepath.Join(root, "etc")) }
	fileIs := func(data []byte, mode string) func(t *testing.T, root string, ch Change) {
		return func(t *testing.T, root string, ch Change) {
			t.Helper()
			p := filepath.Join(root, "etc", "motd")
			got, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.Equal(t, string(data), string(got), "bytes %q, want %q", got, data)
			fi, _ := os.Stat(p)
			m := formatMode(unixMode(fi.Mode()))
			assert.Equal(t, mode, m, "mode")
			assert.Equal(t, "/etc/motd", ch.After.ID, "after state %+v", ch.After)
			assert.Equal(t, digest(data), ch.After.Outputs["checksum"], "after state %+v", ch.After)
			assert.Equal(t, mode, ch.After.Outputs["mode"], "after state %+v", ch.After)
		}
	}
	fileGone := func(t *testing.T, root string, ch Change) {
		t.Helper()
		_, err := os.Lstat(filepath.Join(root, "etc", "motd"))
		assert.ErrorIs(t, err, fs.ErrNotExist, "file still there: %v", err)
	}
	runLifecycle(t, []lifecycleCase{
		{
			name: "create with content and mode", setup: etcOnly, kind: "file",
			spec:       model.Spec{"path": "/etc/motd", "content": "hello\n", "mode": "0600"},
			wantAction: model.ActionCreate, wantOutcome: model.OutcomeCreated, wantChanges: []string{"content", "mode", "path"},
			check: fileIs([]byte("hello\n"), "0600"),
		},
		{
			name: "create empty file with default mode", setup: etcOnly, kind: "file",
			spec:       model.Spec{"path": "etc/motd"},
			wantAction: model.ActionCreate, wantOutcome: model.OutcomeCreated, wantChanges: []string{"path"},
			check: fileIs(nil, "0644"),
		},
		{
			name: "create binary from contentBase64", setup: etcOnly, kind: "file",
			spec:       model.Spec{"path": "/etc/motd", "contentBase64": base64.StdEncoding.EncodeToString(binary), "mode": 420},
			wantAction: model.ActionCreate, wantOutcome: model.OutcomeCreated, wantChanges: []string{"content", "mode", "path"},
			check: fileIs(binary, "0644"),
		},
		{
			name: "create from template with vars", setup: etcOnly, kind: "file",
			spec: model.Spec{"path": "/etc/motd", "template": "port={{ .port }} host={{ .vars.host }}\n",
				"vars": map[string]any{"port": 8080, "host": "db"}},
			wantAction: model.ActionCreate, wantOutcome: model.OutcomeCreated, wantChanges: []string{"content", "path"},
			check: fileIs([]byte("port=8080 host=db\n"), "0644"),
		},
		{
			name: "update content keeps mode", setup: existing("old\n", 0o640), kind: "file",
			spec:       model.Spec{"path": "/etc/motd", "content": "new\n"},
			wantAction: model.ActionUpdate, wantOutcome: model.OutcomeUpdated, wantChanges: []string{"content"},
			check: func(t *testing.T, root string, ch Change) {
				fileIs([]byte("new\n"), "0640")(t, root, ch)
				want := fmt.Sprintf("file/res: content changed %s → %s", digest([]byte("old\n")), digest([]byte("new\n")))
				assert.Equal(t, want, ch.Report, "report")
			},
		},
		{
			name: "update mode only", setup: existing("keep\n", 0o644), kind: "file",
			spec:       model.Spec{"path": "/etc/motd", "mode": 600},
			wantAction: model.ActionUpdate, wantOutcome: model.OutcomeUpdated, wantChanges: []string{"mode"},
			check: func(t *testing.T, root string, ch Change) {
				fileIs([]byte("keep\n"), "0600")(t, root, ch)
				assert.Equal(t, "file/res: mode changed 0644 → 0600", ch.Report, "report")
			},
		},
		{
			name: "update binary to text and mode", setup: existing(string(binary), 0o755), kind: "file",
			spec:       model.Spec{"path": "/etc/motd", "content": "text", "mode": "0644"},
			wantAction: model.ActionUpdate, wantOutcome: model.OutcomeUpdated, wantChanges: []string{"content", "mode"},
			check: fileIs([]byte("text"), "0644"),
		},
		{
			name: "unchanged with equivalent mode spellings", setup: existing("same\n", 0o644), kind: "file",
			spec:       model.Spec{"path": "/etc/motd/", "content": "same\n", "mode": float64(420)},
			wantAction: model.ActionNoop, wantOutcome: model.OutcomeUnchanged,
		},
		{
			name: "ensure absent deletes", setup: existing("bye\n", 0o600), kind: "file",
			spec:       model.Spec{"path": "/etc/motd", "ensure": "absent"},
			wantAction: model.ActionDelete, wantOutcome: model.OutcomeDeleted, wantChanges: []string{"content", "mode", "path"},
			check: fileGone,
		},
		{
			name: "delete by recorded id without a spec", setup: existing(string(binary), 0o604), kind: "file",
			delete: true, objectID: "/etc/motd",
			wantAction: model.ActionDelete, wantOutcome: model.OutcomeDeleted, wantChanges: []string{"content", "mode", "path"},
			check: fileGone,
		},
		{
			name: "delete of an absent file is unchanged", setup: etcOnly, kind: "file",
			spec: model.Spec{"path": "/etc/motd"}, delete: true,
			wantAction: model.ActionNoop, wantOutcome: model.OutcomeUnchanged,
		},
	})
}

func TestDirectoryLifecycle(t *testing.T) {
	existing := func(mode os.FileMode) func(t *testing.T, root string) {
		return func(t *testing.T, root string) {
			mustMkdir(t, filepath.Join(root, "srv", "app"))
			require.NoError(t, os.Chmod(filepath.Join(root, "srv", "app"), mode))
		}
	}
	srvOnly := func(t *testing.T, root string) { mustMkdir(t, filepath.Join(root, "srv")) }
	dirIs := func(mode string) func(t *testing.T, root string, ch Change) {
		return func(t *testing.T, root string, ch Change) {
			t.Helper()
			fi, err := os.Stat(filepath.Join(root, "srv", "app"))
			require.NoError(t, err, "directory missing")
			require.True(t, fi.IsDir(), "directory missing: %v", err)
			m := formatMode(unixMode(fi.Mode()))
			assert.Equal(t, mode, m, "mode")
			assert.Equal(t, "/srv/app", ch.After.Outputs["path"], "outputs %v", ch.After.Outputs)
			assert.Equal(t, mode, ch.After.Outputs["mode"], "outputs %v", ch.After.Outputs)
		}
	}
	runLifecycle(t, []lifecycleCase{
		{
			name: "create with mode", setup: srvOnly, kind: "directory",
			spec:       model.Spec{"path": "/srv/app/", "mode": "0750"},
			wantAction: model.ActionCreate, wantOutcome: model.OutcomeCreated, wantChanges: []string{"mode", "path"},
			check: dirIs("0750"),
		},
		{
			name: "create with default mode", setup: srvOnly, kind: "directory",
			spec:       model.Spec{"path": "srv/app"},
			wantAction: model.ActionCreate, wantOutcome: model.OutcomeCreated, wantChanges: []string{"path"},
			check: dirIs("0755"),
		},
		{
			name: "update mode", setup: existing(0o755), kind: "directory",
			spec:       model.Spec{"path": "/srv/app", "mode": 700},
			wantAction: model.ActionUpdate, wantOutcome: model.OutcomeUpdated, wantChanges: []string{"mode"},
			check: dirIs("0700"),
		},
		{
			name: "unchanged", setup: existing(0o755), kind: "directory",
			spec:       model.Spec{"path": "/srv/app", "mode": 493},
			wantAction: model.ActionNoop, wantOutcome: model.OutcomeUnchanged,
		},
		{
			name: "ensure absent removes an empty directory", setup: existing(0o711), kind: "directory",
			spec:       model.Spec{"path": "/srv/app", "ensure": "absent"},
			wantAction: model.ActionDelete, wantOutcome: model.OutcomeDeleted, wantChanges: []string{"mode", "path"},
			check: func(t *testing.T, root string, ch Change) {
				_, err := os.Stat(filepath.Join(root, "srv", "app"))
				assert.ErrorIs(t, err, fs.ErrNotExist, "directory still there: %v", err)
			},
		},
	})
}

func TestCompensateSetsBackAfterLaterEdits(t *testing.T) {
	// Compensation converges to Before, whatever happened in between.
	ctx := context.Background()
	r := localRegistry(t)
	node := localNode(t)
	p := filepath.Join(node.Root, "motd")
	mustWrite(t, p, []byte("original"), 0o600)
	req := Request{Kind: "file", Name: "motd", Node: node, Spec: model.Spec{"path": "/motd", "content": "managed", "mode": "0644"}}
	ch, err := r.Converge(ctx, req)
	require.NoError(t, err)
	mustWrite(t, p, []byte("edited by hand"), 0o666)
	require.NoError(t, r.Compensate(ctx, req, jsonRoundTrip(t, ch)))
	got, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	require.Equal(t, "original", string(got), "after compensation: %q %v", got, fi.Mode())
	assert.Equal(t, fs.FileMode(0o600), fi.Mode().Perm(), "after compensation: %q %v", got, fi.Mode())
}

func TestInitOnlyAttributeRefused(t *testing.T) {
	ctx := context.Background()
	cat := kinds.Builtin()
	require.NoError(t, cat.Add(kinds.Kind{Name: "LockedFile", Base: "file", Attributes: map[string]kinds.AttrKind{"mode": kinds.InitOnly}}))
	r := localRegistryWith(cat)
	node := localNode(t)
	req := Request{Kind: "LockedFile", Name: "key", Node: node, Spec: model.Spec{"path": "/key", "content": "k1", "mode": "0600"}}
	ch, err := r.Converge(ctx, req)
	require.NoError(t, err, "create: %v %+v", err, ch)
	require.Equal(t, model.OutcomeCreated, ch.Outcome, "create: %v %+v", err, ch)
	// Content is a property: it may change.
	req.Spec = model.Spec{"path": "/key", "content": "k2", "mode": "0600"}
	ch, err = r.Converge(ctx, req)
	require.NoError(t, err, "content update: %v %+v", err, ch)
	require.Equal(t, model.OutcomeUpdated, ch.Outcome, "content update: %v %+v", err, ch)
	// The mode is init-only: changing it on the existing file is refused,
	// in noop too, and nothing is touched.
	for _, noop := range []bool{true, false} {
		req.Spec = model.Spec{"path": "/key", "content": "k3", "mode": "0644"}
		req.Noop = noop
		ch, err := r.Converge(ctx, req)
		require.True(t, IsConfigError(err), "noop=%v: err %v outcome %q; want a ConfigError and failed", noop, err, ch.Outcome)
		require.Equal(t, model.OutcomeFailed, ch.Outcome, "noop=%v: err %v outcome %q; want a ConfigError and failed", noop, err, ch.Outcome)
		require.Contains(t, err.Error(), "mode", "error %q / report %q do not name the attribute and resource", err, ch.Report)
		assert.Contains(t, ch.Report, "lockedfile/key: failed", "error %q / report %q do not name the attribute and resource", err, ch.Report)
	}
	got, _ := os.ReadFile(filepath.Join(node.Root, "key"))
	fi, _ := os.Stat(filepath.Join(node.Root, "key"))
	require.Equal(t, "k2", string(got), "refused change touched the file: %q %v", got, fi.Mode())
	assert.Equal(t, fs.FileMode(0o600), fi.Mode().Perm(), "refused change touched the file: %q %v", got, fi.Mode())
}

func TestConvergeConfigErrors(t *testing.T) {
	ctx := context.Background()
	r := localRegistry(t)
	node := localNode(t)
	tests := []struct {
		name    string
		kind    string
		spec    model.Spec
		wantMsg string
	}{
		{"unknown kind", "nosuchkind", model.Spec{}, "unknown kind"},
		{"missing path", "file", model.Spec{"content": "x"}, "path: required"},
		{"bad mode", "file", model.Spec{"path": "/a", "mode": "banana"}, "mode"},
		{"two content sources", "file", model.Spec{"path": "/a", "content": "x", "contentBase64": "eA=="}, "only one of"},
		{"bad base64", "file", model.Spec{"path": "/a", "contentBase64": "!!"}, "contentBase64"},
		{"bad template", "file", model.Spec{"path": "/a", "template": "{{ .x "}, "template"},
		{"template reads env", "file", model.Spec{"path": "/a", "template": `{{ env "HOME" }}`}, "through vars"},
		{"unknown attribute", "file", model.Spec{"path": "/a", "contnet": "x"}, `did you mean "content"`},
		{"bad ensure", "directory", model.Spec{"path": "/a", "ensure": "maybe"}, "ensure"},
		{"escaping path", "file", model.Spec{"path": "../../etc/passwd", "content": "x"}, "escapes"},
		{"exec without command", "exec", model.Spec{"cwd": "/"}, "command"},
		{"exec with both", "exec", model.Spec{"command": "true", "argv": []any{"true"}}, "not both"},
		{"exec bad timeout", "exec", model.Spec{"command": "true", "timeout": "soon"}, "timeout"},
		{"exec bad returns", "exec", model.Spec{"command": "true", "returns": []any{"zero"}}, "returns"},
		{"exec bad env", "exec", model.Spec{"command": "true", "env": []any{"NOEQUALS"}}, "env"},
	}
	for _, tt := range tests {
		ch, err := r.Converge(ctx, Request{Kind: tt.kind, Name: "x", Spec: tt.spec, Node: node})
		if !assert.True(t, IsConfigError(err), "%s: err = %v, want a ConfigError", tt.name, err) {
			continue
		}
		assert.Contains(t, err.Error(), tt.wantMsg, "%s: error %q does not mention %q", tt.name, err, tt.wantMsg)
		assert.Equal(t, model.OutcomeFailed, ch.Outcome, "%s: outcome %q, want failed", tt.name, ch.Outcome)
	}
	entries, _ := os.ReadDir(node.Root)
	assert.Empty(t, entries, "invalid specs left entries behind")
}

func TestRegistryGet(t *testing.T) {
	cat := kinds.Builtin()
	require.NoError(t, cat.Add(kinds.Kind{Name: "Motd", Base: "file", Defaults: map[string]any{"path": "/etc/motd"}}))
	r := localRegistryWith(cat)
	for kind, want := range map[string]string{
		"file": "file", "FILE": "file", "Directory": "directory", "exec": "exec",
		"shell": "exec", "upload_file": "file", "Motd": "file", "group": "group", "Stage": "stage", "skipped": "skipped",
	} {
		p, ok := r.Get(kind)
		require.True(t, ok, "Get(%q) = %v, %v; want %s", kind, p, ok, want)
		assert.Equal(t, want, p.Kind(), "Get(%q) = %v, %v; want %s", kind, p, ok, want)
	}
	for _, kind := range []string{"http", "nosuch", ""} {
		_, ok := r.Get(kind)
		assert.False(t, ok, "Get(%q) found a provider", kind)
	}
	// Without a catalogue, providers' own declarations keep read-only
	// attributes out of the diff.
	bare := localRegistryWith(nil)
	node := localNode(t)
	req := Request{Kind: "file", Name: "f", Node: node, Spec: model.Spec{"path": "/f", "content": "x"}}
	_, err := bare.Converge(context.Background(), req)
	require.NoError(t, err)
	req.Spec["checksum"] = "{sha256}bogus"
	ch, err := bare.Converge(context.Background(), req)
	require.NoError(t, err, "read-only checksum was diffed: %v %+v", err, ch)
	assert.Equal(t, model.ActionNoop, ch.Action, "read-only checksum was diffed: %v %+v", err, ch)
}

func TestChangeKeepsContentOutOfReports(t *testing.T) {
	ctx := context.Background()
	r := localRegistry(t)
	node := localNode(t)
	const secret = "password=hunter2-very-secret"
	mustWrite(t, filepath.Join(node.Root, "app.conf"), []byte("password=old-secret-value"), 0o600)
	ch, err := r.Converge(ctx, Request{Kind: "file", Name: "conf", Node: node, Spec: model.Spec{"path": "/app.conf", "content": secret}})
	require.NoError(t, err)
	shown, _ := json.Marshal(struct {
		Changes []model.AttrChange
		Report  string
		After   State
		Attrs   map[string]any
		Outputs map[string]any
	}{ch.Changes, ch.Report, ch.After, ch.Before.Attrs, ch.Before.Outputs})
	for _, s := range []string{secret, "hunter2", "old-secret-value"} {
		assert.NotContains(t, string(shown), s, "%q leaked into the change: %s", s, shown)
	}
	assert.Nil(t, ch.After.Private, "after state carries private bytes")
}

func TestCanonicalizeIsStable(t *testing.T) {
	// Canonicalizing a canonical spec changes nothing (Puppet's rule), so
	// a spec compared twice compares the same.
	specs := []struct {
		kind string
		spec model.Spec
	}{
		{"file", model.Spec{"path": "/etc//motd/", "content": "x", "mode": 420}},
		{"file", model.Spec{"path": "etc/motd", "contentBase64": "AAEC/w==", "ensure": "file"}},
		{"file", model.Spec{"path": "/t", "template": "{{ .a }}", "vars": map[string]any{"a": 1}}},
		{"file", model.Spec{"path": "/n", "content": 42}},
		{"file", model.Spec{"path": "/gone", "ensure": "absent"}},
		{"directory", model.Spec{"path": "/srv/", "mode": "755"}},
		{"exec", model.Spec{"command": "true", "timeout": 90, "returns": 2, "env": []any{"A=1"}, "cwd": "/srv/", "creates": "/x/"}},
		{"exec", model.Spec{"argv": []any{"true"}, "unless": []any{"false"}, "undo": "true", "onlyif": "true"}},
	}
	r := localRegistry(t)
	for _, s := range specs {
		p, _ := r.Get(s.kind)
		once, err := p.Canonicalize(NormalizeSpec(s.spec))
		if !assert.NoError(t, err, "%s %v", s.kind, s.spec) {
			continue
		}
		twice, err := p.Canonicalize(NormalizeSpec(once))
		require.NoError(t, err, "%s: canonical %v became %v (%v)", s.kind, once, twice, err)
		assert.True(t, EqualValues(once, twice), "%s: canonical %v became %v (%v)", s.kind, once, twice, err)
		if s.kind == "file" && once["ensure"] == "present" && s.spec["content"] == 42 {
			assert.Equal(t, "42", once["content"], "numeric content canonical %v", once["content"])
		}
	}
}
