package providers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// TestFileLineSemantics applies file_line specs to real files and checks
// the bytes left, rule by rule as Puppet stdlib's file_line provider
// decides them, and that a second apply changes nothing.
func TestFileLineSemantics(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		before  string
		spec    model.Spec
		after   string
		changed bool
	}{
		{"appends a missing line", "a=1\n", model.Spec{"line": "b=2"}, "a=1\nb=2\n", true},
		{"appends after a last line without newline", "a=1", model.Spec{"line": "b=2"}, "a=1\nb=2\n", true},
		{"present line is left alone", "a=1\nb=2\n", model.Spec{"line": "b=2"}, "a=1\nb=2\n", false},
		{"leading space matters", "a=1\n b=2\n", model.Spec{"line": "b=2"}, "a=1\n b=2\nb=2\n", true},
		{"match replaces the matching line in place", "a=1\nb=1\nc=1\n", model.Spec{"line": "b=2", "match": "^b="}, "a=1\nb=2\nc=1\n", true},
		{"match with no match appends", "a=1\n", model.Spec{"line": "b=2", "match": "^b="}, "a=1\nb=2\n", true},
		{"no match and append_on_no_match false leaves the file", "a=1\n", model.Spec{"line": "b=2", "match": "^b=", "append_on_no_match": false}, "a=1\n", false},
		{"replace false keeps a matching line", "b=1\n", model.Spec{"line": "b=2", "match": "^b=", "replace": "false"}, "b=1\n", false},
		{"multiple replaces every match", "b=1\nx\nb=3\n", model.Spec{"line": "b=2", "match": "^b=", "multiple": true}, "b=2\nx\nb=2\n", true},
		{"after puts the line after its match", "[main]\nx=1\n[other]\n", model.Spec{"line": "y=2", "after": `^\[main\]$`}, "[main]\ny=2\nx=1\n[other]\n", true},
		{"after without a match appends", "x=1\n", model.Spec{"line": "y=2", "after": `^\[main\]$`}, "x=1\ny=2\n", true},
		{"match and after: no match inserts after", "[main]\nx=1\n", model.Spec{"line": "y=2", "match": "^y=", "after": `^\[main\]$`}, "[main]\ny=2\nx=1\n", true},
		{"absent removes every equal line, keeps the rest byte-exact", "a=1\r\nb=2\nb=2\nc=3", model.Spec{"line": "b=2", "ensure": "absent"}, "a=1\r\nc=3", true},
		{"absent of a missing line changes nothing", "a=1\n", model.Spec{"line": "b=2", "ensure": "absent"}, "a=1\n", false},
		{"match_for_absence removes the matching line", "a=1\nb=7\n", model.Spec{"match": "^b=", "ensure": "absent", "match_for_absence": true}, "a=1\n", true},
		{"absent without match_for_absence ignores matches", "a=1\nb=7\n", model.Spec{"line": "b=2", "match": "^b=", "ensure": "absent"}, "a=1\nb=7\n", false},
		{"replace_all_matches_not_matching_line", "b=2\nb=1\n", model.Spec{"line": "b=2", "match": "^b=", "multiple": true, "replace_all_matches_not_matching_line": true}, "b=2\nb=2\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, node := localRegistry(t), localNode(t)
			path := filepath.Join(node.Root, "etc.conf")
			mustWrite(t, path, []byte(tt.before), 0o640)
			spec := model.Spec{"path": "/etc.conf"}
			for k, v := range tt.spec {
				spec[k] = v
			}
			req := Request{Kind: "file_line", Name: "l", Node: node, Spec: spec}
			ch, err := r.Converge(ctx, req)
			require.NoError(t, err)
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tt.after, string(got), "bytes after apply")
			assert.Equal(t, tt.changed, ch.Action != model.ActionNoop, "action %s", ch.Action)
			fi, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "mode kept")
			again, err := r.Converge(ctx, req)
			require.NoError(t, err)
			if tt.spec["replace_all_matches_not_matching_line"] != true {
				// stdlib's own rule: with it, exists? always says there is work.
				assert.Equal(t, model.ActionNoop, again.Action, "re-apply: %s", again.Report)
			}
		})
	}
}

// TestFileLineLifecycle: apply, re-apply, noop, change, undo byte-exact.
func TestFileLineLifecycle(t *testing.T) {
	ctx := context.Background()
	r, node := localRegistry(t), localNode(t)
	path := filepath.Join(node.Root, "sshd_config")
	orig := "# sshd\nPermitRootLogin yes\nPort 22" // no final newline: restored as it was
	mustWrite(t, path, []byte(orig), 0o600)
	req := Request{Kind: "file_line", Name: "root", Node: node,
		Spec: model.Spec{"path": "/sshd_config", "line": "PermitRootLogin no", "match": "^PermitRootLogin "}}

	noop := req
	noop.Noop = true
	plan, err := r.Converge(ctx, noop)
	require.NoError(t, err)
	assert.Equal(t, model.ActionCreate, plan.Action)
	assert.Contains(t, plan.Report, "would create")
	got, _ := os.ReadFile(path)
	assert.Equal(t, orig, string(got), "noop wrote")

	ch, err := r.Converge(ctx, req)
	require.NoError(t, err)
	require.Equal(t, model.OutcomeCreated, ch.Outcome)
	got, _ = os.ReadFile(path)
	assert.Equal(t, "# sshd\nPermitRootLogin no\nPort 22\n", string(got))

	again, err := r.Converge(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, model.ActionNoop, again.Action)

	change := req
	change.Spec = model.Spec{"path": "/sshd_config", "line": "PermitRootLogin prohibit-password", "match": "^PermitRootLogin "}
	ch2, err := r.Converge(ctx, change)
	require.NoError(t, err)
	got, _ = os.ReadFile(path)
	assert.Equal(t, "# sshd\nPermitRootLogin prohibit-password\nPort 22\n", string(got))

	// Undo in reverse order: back to the original bytes exactly.
	require.NoError(t, r.Compensate(ctx, change, ch2))
	got, _ = os.ReadFile(path)
	assert.Equal(t, "# sshd\nPermitRootLogin no\nPort 22\n", string(got))
	require.NoError(t, r.Compensate(ctx, req, ch))
	got, _ = os.ReadFile(path)
	assert.Equal(t, orig, string(got), "rollback is byte-exact")
	fi, _ := os.Stat(path)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	// Leaving the stack (delete without a spec) leaves the line alone.
	_, err = r.Converge(ctx, Request{Kind: "file_line", Name: "root", Node: node, ObjectID: "/sshd_config", Delete: true})
	require.NoError(t, err)
	got, _ = os.ReadFile(path)
	assert.Equal(t, orig, string(got))

	_, err = r.List(ctx, "file_line", node, ListQuery{Dir: "/"})
	require.Error(t, err)
	assert.True(t, IsConfigError(err))
}

func TestFileLineBadInput(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		spec   model.Spec
		config bool
		msg    string
	}{
		{"no line", model.Spec{"path": "/f"}, true, "line: required"},
		{"bad regexp", model.Spec{"path": "/f", "line": "x", "match": "(["}, true, "match: not a regular expression"},
		{"newline in line", model.Spec{"path": "/f", "line": "x\ny"}, true, "no newline"},
		{"unknown attribute", model.Spec{"path": "/f", "line": "x", "encoding": "UTF-8"}, true, "unknown attribute"},
		{"bad boolean", model.Spec{"path": "/f", "line": "x", "multiple": "yes"}, true, "want true or false"},
		{"replace_all without multiple", model.Spec{"path": "/f", "line": "x", "match": "x", "replace_all_matches_not_matching_line": true}, true, "multiple must be true"},
		{"missing file", model.Spec{"path": "/missing", "line": "x"}, false, "/missing does not exist: declare a file resource"},
		{"two matches without multiple", model.Spec{"path": "/f", "line": "b=2", "match": "^b="}, false, "more than one line in file /f matches"},
		{"two after matches without multiple", model.Spec{"path": "/f", "line": "z", "after": "^b="}, false, "2 lines match pattern"},
		{"escape", model.Spec{"path": "/../f", "line": "x"}, true, "escapes the root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, node := localRegistry(t), localNode(t)
			path := filepath.Join(node.Root, "f")
			mustWrite(t, path, []byte("b=1\nb=3\n"), 0o644)
			_, err := r.Converge(ctx, Request{Kind: "file_line", Name: "l", Node: node, Spec: tt.spec})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.msg)
			assert.Equal(t, tt.config, IsConfigError(err), "config error: %v", err)
			got, _ := os.ReadFile(path)
			assert.Equal(t, "b=1\nb=3\n", string(got), "refused apply changed the file")
		})
	}
}

// TestFileLineNoopMissingFile: a dry-run before the file resource that
// creates the file reads it as empty, as Puppet's noop does.
func TestFileLineNoopMissingFile(t *testing.T) {
	r, node := localRegistry(t), localNode(t)
	ch, err := r.Converge(context.Background(), Request{Kind: "file_line", Name: "l", Node: node, Noop: true,
		Spec: model.Spec{"path": "/later", "line": "x"}})
	require.NoError(t, err)
	assert.Equal(t, model.ActionCreate, ch.Action)
	_, err = os.Stat(filepath.Join(node.Root, "later"))
	assert.True(t, os.IsNotExist(err))
}

// TestFileLineSameFileOneWave: file_lines of one file planned together
// and applied at once (one wave of a unit) lose none of their lines, and
// undone they leave the original bytes.
func TestFileLineSameFileOneWave(t *testing.T) {
	ctx := context.Background()
	r, node := localRegistry(t), localNode(t)
	path := filepath.Join(node.Root, "conf")
	mustWrite(t, path, []byte("# conf\n"), 0o644)
	const n = 8
	reqs := make([]Request, n)
	plans := make([]Change, n)
	for i := range reqs {
		reqs[i] = Request{Kind: "file_line", Name: fmt.Sprint("l", i), Node: node,
			Spec: model.Spec{"path": "/conf", "line": fmt.Sprintf("key%d = %d", i, i), "match": fmt.Sprintf("^key%d ", i)}}
		noop := reqs[i]
		noop.Noop = true
		var err error
		plans[i], err = r.Converge(ctx, noop)
		require.NoError(t, err)
	}
	changes := make([]Change, n)
	var wg sync.WaitGroup
	for i := range reqs {
		wg.Go(func() {
			req := reqs[i]
			req.Have = &plans[i].Before
			var err error
			changes[i], err = r.Converge(ctx, req)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	for i := range n {
		assert.Contains(t, string(got), fmt.Sprintf("key%d = %d\n", i, i))
	}
	assert.Len(t, strings.Split(strings.TrimSuffix(string(got), "\n"), "\n"), n+1)
	for i := n - 1; i >= 0; i-- {
		require.NoError(t, r.Compensate(ctx, reqs[i], changes[i]))
	}
	got, _ = os.ReadFile(path)
	assert.Equal(t, "# conf\n", string(got))
}

// TestFileLineChangedSincePlan: the line appeared between the plan and
// the apply (another resource, or a hand): the apply does not add it
// twice.
func TestFileLineChangedSincePlan(t *testing.T) {
	ctx := context.Background()
	r, node := localRegistry(t), localNode(t)
	path := filepath.Join(node.Root, "conf")
	mustWrite(t, path, []byte("a\n"), 0o644)
	req := Request{Kind: "file_line", Name: "b", Node: node, Spec: model.Spec{"path": "/conf", "line": "b"}}
	noop := req
	noop.Noop = true
	plan, err := r.Converge(ctx, noop)
	require.NoError(t, err)
	require.Equal(t, model.ActionCreate, plan.Action)
	mustWrite(t, path, []byte("a\nb\n"), 0o644)
	req.Have = &plan.Before
	_, err = r.Converge(ctx, req)
	require.NoError(t, err)
	got, _ := os.ReadFile(path)
	assert.Equal(t, "a\nb\n", string(got))
}
