package providers

import (
	"context"
	"encoding/base64"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func TestList(t *testing.T) {
	ctx := context.Background()
	r := localRegistry(t)
	node := localNode(t)
	outside := t.TempDir()
	mustWrite(t, filepath.Join(outside, "secret"), []byte("outside"), 0o644)
	etc := filepath.Join(node.Root, "etc")
	mustMkdir(t, filepath.Join(etc, "app"))
	mustMkdir(t, filepath.Join(etc, "app", "conf.d"))
	mustWrite(t, filepath.Join(etc, "motd"), []byte("hello\n"), 0o644)
	mustWrite(t, filepath.Join(etc, "key.bin"), []byte{0xff, 0, 1}, 0o600)
	mustWrite(t, filepath.Join(etc, "app", "app.conf"), []byte("a=1\n"), 0o640)
	mustWrite(t, filepath.Join(etc, ".motd.cairn-tmp"), []byte("stale"), 0o600)
	mustSymlink(t, outside, filepath.Join(etc, "out"))
	mustSymlink(t, filepath.Join(outside, "secret"), filepath.Join(etc, "secret"))

	motd := Listed{Name: "motd", Spec: model.Spec{"path": "/etc/motd", "content": "hello\n", "mode": "0644"}}
	key := Listed{Name: "key.bin", Spec: model.Spec{"path": "/etc/key.bin", "contentBase64": base64.StdEncoding.EncodeToString([]byte{0xff, 0, 1}), "mode": "0600"}}
	appConf := Listed{Name: "app/app.conf", Spec: model.Spec{"path": "/etc/app/app.conf", "content": "a=1\n", "mode": "0640"}}
	app := Listed{Name: "app", Spec: model.Spec{"path": "/etc/app", "mode": "0755"}}
	confD := Listed{Name: "app/conf.d", Spec: model.Spec{"path": "/etc/app/conf.d", "mode": "0755"}}

	tests := []struct {
		name string
		kind string
		q    ListQuery
		want []Listed
	}{
		{"files in a directory", "file", ListQuery{Dir: "/etc"}, []Listed{key, motd}},
		{"files recursively", "File", ListQuery{Dir: "etc/", Recursive: true}, []Listed{appConf, key, motd}},
		{"files by name", "file", ListQuery{Dir: "/etc", Names: []string{"motd", "missing", "app"}}, []Listed{motd}},
		{"nested name needs recursive", "file", ListQuery{Dir: "/etc", Names: []string{"app/app.conf"}}, nil},
		{"nested name", "file", ListQuery{Dir: "/etc", Names: []string{"app/app.conf"}, Recursive: true}, []Listed{appConf}},
		{"directories", "directory", ListQuery{Dir: "/etc"}, []Listed{app}},
		{"directories recursively", "directory", ListQuery{Dir: "/etc", Recursive: true}, []Listed{app, confD}},
	}
	for _, tt := range tests {
		got, err := r.List(ctx, tt.kind, node, tt.q)
		if !assert.NoError(t, err, tt.name) {
			continue
		}
		assert.Equal(t, tt.want, got, "%s:\ngot  %v\nwant %v", tt.name, got, tt.want)
	}

	// Listed specs converge as they are: exporting then applying is a noop.
	for _, l := range []Listed{motd, key, appConf} {
		ch, err := r.Converge(ctx, Request{Kind: "file", Name: l.Name, Node: node, Spec: l.Spec})
		require.NoError(t, err, "re-applying exported %s: %v %+v", l.Name, err, ch)
		assert.Equal(t, model.ActionNoop, ch.Action, "re-applying exported %s: %v %+v", l.Name, err, ch)
	}

	errs := []struct {
		name, kind string
		q          ListQuery
		want       string
	}{
		{"exec cannot list", "exec", ListQuery{Dir: "/etc"}, "kind exec cannot be listed"},
		{"unknown kind", "nosuch", ListQuery{Dir: "/etc"}, "unknown kind"},
		{"dir required", "file", ListQuery{}, "dir: required"},
		{"dir escapes", "file", ListQuery{Dir: "../.."}, "escapes the root"},
		{"dir through symlink", "file", ListQuery{Dir: "/etc/out"}, "leaves the root"},
		{"name escapes", "file", ListQuery{Dir: "/etc", Names: []string{"../../x"}}, "not a path inside"},
		{"name through symlink", "file", ListQuery{Dir: "/etc", Names: []string{"out/secret"}, Recursive: true}, "leaves the root"},
		{"dir is a file", "file", ListQuery{Dir: "/etc/motd"}, "not a directory"},
	}
	for _, tt := range errs {
		_, err := r.List(ctx, tt.kind, node, tt.q)
		require.True(t, IsConfigError(err), "%s: err %v, want a ConfigError saying %q", tt.name, err, tt.want)
		assert.Contains(t, err.Error(), tt.want, "%s: err %v, want a ConfigError saying %q", tt.name, err, tt.want)
	}
}

func TestStructuralKinds(t *testing.T) {
	ctx := context.Background()
	r := localRegistry(t)
	node := localNode(t)
	for _, kind := range []string{"group", "stage", "skipped", "Group"} {
		for _, req := range []Request{
			{Kind: kind, Name: "deploy", Node: node, Spec: model.Spec{"anything": []any{1, 2}}},
			{Kind: kind, Name: "deploy", Node: node, Noop: true},
			{Kind: kind, Name: "deploy", Node: node, Delete: true},
		} {
			ch, err := r.Converge(ctx, req)
			require.NoError(t, err, "%s %+v: %v %+v", kind, req, err, ch)
			require.Equal(t, model.ActionNoop, ch.Action, "%s %+v: %v %+v", kind, req, err, ch)
			assert.Equal(t, model.OutcomeUnchanged, ch.Outcome, "%s %+v: %v %+v", kind, req, err, ch)
			err = r.Compensate(ctx, req, ch)
			assert.NoError(t, err, "%s: compensate: %v", kind, err)
		}
		_, err := r.List(ctx, kind, node, ListQuery{Dir: "/"})
		assert.True(t, IsConfigError(err), "%s listed: %v", kind, err)
	}
	entries := snapshot(t, node.Root)
	assert.Empty(t, entries, "structural kinds touched the node")
}
