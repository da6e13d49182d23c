package providers

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// accountsNode is a local node holding a small copy of a host's account
// files, for the shadow tools to work on with --root. The tools need
// root; a run as another user skips, except where every test must run.
func accountsNode(t *testing.T) Node {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CAIRN_REQUIRE_ALL") != "" {
			t.Fatal("the account kinds' tests run the shadow tools, which need root (CAIRN_REQUIRE_ALL is set)")
		}
		t.Skip("the shadow tools need root")
	}
	for _, tool := range []string{"useradd", "usermod", "userdel", "groupadd", "groupmod", "groupdel"} {
		if _, err := os.Stat("/usr/sbin/" + tool); err != nil {
			t.Fatalf("%s is missing (Debian's passwd package): %v", tool, err)
		}
	}
	node := localNode(t)
	files := map[string]string{
		"passwd":  "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		"group":   "root:x:0:\ndaemon:x:1:\nusers:x:100:\nnogroup:x:65534:\n",
		"shadow":  "root:*:20000:0:99999:7:::\ndaemon:*:20000:0:99999:7:::\nnobody:*:20000:0:99999:7:::\n",
		"gshadow": "root:*::\ndaemon:*::\nusers:*::\nnogroup:*::\n",
	}
	mustMkdir(t, filepath.Join(node.Root, "etc"))
	mustMkdir(t, filepath.Join(node.Root, "home"))
	for name, data := range files {
		mode := os.FileMode(0o644)
		if strings.Contains(name, "shadow") {
			mode = 0o640
		}
		mustWrite(t, filepath.Join(node.Root, "etc", name), []byte(data), mode)
	}
	return node
}

// accountSnap is the node's account files as a test compares them.
func accountSnap(t *testing.T, node Node) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range []string{"passwd", "group", "shadow", "gshadow"} {
		data, err := os.ReadFile(filepath.Join(node.Root, "etc", name))
		require.NoError(t, err)
		// The tools date a changed password (shadow's third field, in
		// days); the rest of the line is what is compared.
		var lines []string
		for _, l := range strings.Split(string(data), "\n") {
			if f := strings.Split(l, ":"); name == "shadow" && len(f) > 2 {
				f[2] = "-"
				l = strings.Join(f, ":")
			}
			lines = append(lines, l)
		}
		out[name] = strings.Join(lines, "\n")
	}
	return out
}

func accountLine(t *testing.T, node Node, file, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(node.Root, "etc", file))
	require.NoError(t, err)
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, name+":") {
			return l
		}
	}
	return ""
}

// stored is a change as compensation finds it after an apply: the
// before-state whole (JSON round trip), the after-state by id, existence
// and outputs only.
func stored(t *testing.T, ch Change) Change {
	t.Helper()
	raw, err := json.Marshal(ch.Before)
	require.NoError(t, err)
	var before State
	require.NoError(t, json.Unmarshal(raw, &before))
	raw, err = json.Marshal(ch.After.Outputs)
	require.NoError(t, err)
	var outputs map[string]any
	require.NoError(t, json.Unmarshal(raw, &outputs))
	return Change{Action: ch.Action, Outcome: ch.Outcome, Before: before,
		After: State{ID: ch.After.ID, Exists: ch.Action != model.ActionDelete, Outputs: outputs}}
}

const (
	hashOne = "$6$cairnsalt$Q1w2e3r4t5y6u7i8o9p0aSdFgHjKlZxCvBnM1234567890abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"
	hashTwo = "$y$j9T$cairnsalt2$abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ"
)

func TestAccountsApplyReapplyChangeRollback(t *testing.T) {
	ctx := context.Background()
	r := localRegistry(t)
	node := accountsNode(t)
	converge := func(kind, name string, spec model.Spec, secrets ...string) Change {
		t.Helper()
		ch, err := r.Converge(ctx, Request{Kind: kind, Name: name, Node: node, Spec: spec, Secrets: secrets})
		require.NoError(t, err, "%s/%s", kind, name)
		return ch
	}
	initial := accountSnap(t, node)

	// Groups first, as the user's auto-edges order them.
	devs := converge("unix_group", "devs", model.Spec{"gid": 2001})
	require.Equal(t, model.OutcomeCreated, devs.Outcome, devs.Report)
	converge("unix_group", "ops", model.Spec{"name": "ops"})
	assert.Equal(t, "devs:x:2001:", accountLine(t, node, "group", "devs"))
	assert.NotEmpty(t, accountLine(t, node, "group", "ops"))
	withGroups := accountSnap(t, node)

	alice := model.Spec{"uid": 2001, "gid": "devs", "groups": []any{"ops"}, "home": "/home/alice", "managehome": true,
		"shell": "/bin/bash", "comment": "Alice A", "password": hashOne}
	created := converge("user", "alice", alice, hashOne)
	require.Equal(t, model.OutcomeCreated, created.Outcome, created.Report)
	assert.Equal(t, "alice:x:2001:2001:Alice A:/home/alice:/bin/bash", accountLine(t, node, "passwd", "alice"))
	assert.Contains(t, accountLine(t, node, "group", "ops"), ":alice")
	assert.True(t, strings.HasPrefix(accountLine(t, node, "shadow", "alice"), "alice:"+hashOne+":"), "shadow holds the hash")
	fi, err := os.Stat(filepath.Join(node.Root, "home", "alice"))
	require.NoError(t, err, "managehome made the home")
	assert.True(t, fi.IsDir())
	assert.Equal(t, true, created.After.Outputs["homeCreated"])
	shown, err := json.Marshal(created)
	require.NoError(t, err)
	assert.NotContains(t, string(shown), "cairnsalt", "the hash reaches the change: %s", shown)
	shownChanges, err := json.Marshal(created.Changes)
	require.NoError(t, err)
	assert.Contains(t, string(shownChanges), "{hmac-sha256}", "the password shows as a keyed fingerprint")
	afterCreate := accountSnap(t, node)

	again := converge("user", "alice", alice, hashOne)
	assert.Equal(t, model.ActionNoop, again.Action, "re-apply: %s", again.Report)

	changed := copyMap(alice)
	changed["shell"], changed["groups"], changed["comment"], changed["password"] = "/bin/sh", []any{"devs", "users"}, "Alice B", hashTwo
	noop, err := r.Converge(ctx, Request{Kind: "user", Name: "alice", Node: node, Spec: changed, Secrets: []string{hashTwo}, Noop: true})
	require.NoError(t, err)
	assert.Equal(t, model.ActionUpdate, noop.Action)
	var paths []string
	for _, c := range noop.Changes {
		paths = append(paths, c.Path)
	}
	assert.Equal(t, []string{"comment", "groups", "password", "shell"}, paths, noop.Report)
	assert.Equal(t, afterCreate, accountSnap(t, node), "noop changed the account files")

	update := converge("user", "alice", changed, hashTwo)
	require.Equal(t, model.OutcomeUpdated, update.Outcome, update.Report)
	assert.Equal(t, "alice:x:2001:2001:Alice B:/home/alice:/bin/sh", accountLine(t, node, "passwd", "alice"))
	assert.Contains(t, accountLine(t, node, "group", "users"), ":alice")
	assert.NotContains(t, accountLine(t, node, "group", "ops"), "alice")
	assert.True(t, strings.HasPrefix(accountLine(t, node, "shadow", "alice"), "alice:"+hashTwo+":"))
	shown, err = json.Marshal(update.After)
	require.NoError(t, err)
	assert.NotContains(t, string(shown), "cairnsalt", "the state left holds a hash: %s", shown)

	require.NoError(t, r.Compensate(ctx, Request{Kind: "user", Name: "alice", Node: node, Spec: changed}, stored(t, update)))
	assert.Equal(t, afterCreate, accountSnap(t, node), "undoing the change restores attributes, groups and hash")

	require.NoError(t, r.Compensate(ctx, Request{Kind: "user", Name: "alice", Node: node, Spec: alice}, stored(t, created)))
	assert.Equal(t, withGroups, accountSnap(t, node), "undoing the create removes the user")
	_, err = os.Stat(filepath.Join(node.Root, "home", "alice"))
	assert.True(t, os.IsNotExist(err), "the home the apply made is gone: %v", err)

	regid := converge("unix_group", "devs", model.Spec{"gid": 2005})
	assert.Equal(t, "devs:x:2005:", accountLine(t, node, "group", "devs"))
	require.NoError(t, r.Compensate(ctx, Request{Kind: "unix_group", Name: "devs", Node: node, Spec: model.Spec{"gid": 2005}}, stored(t, regid)))
	assert.Equal(t, "devs:x:2001:", accountLine(t, node, "group", "devs"))
	require.NoError(t, r.Compensate(ctx, Request{Kind: "unix_group", Name: "devs", Node: node, Spec: model.Spec{"gid": 2001}}, stored(t, devs)))
	assert.Empty(t, accountLine(t, node, "group", "devs"))
	assert.NotEmpty(t, accountLine(t, node, "group", "ops"))
	opsLine := accountLine(t, node, "group", "ops")
	assert.Equal(t, initial["group"]+opsLine+"\n", accountSnap(t, node)["group"], "only the group left in place remains")
	assert.Equal(t, initial["passwd"], accountSnap(t, node)["passwd"])
}

func TestUserHomeKeptWhenNotCreatedByApply(t *testing.T) {
	ctx := context.Background()
	r := localRegistry(t)
	node := accountsNode(t)
	mustMkdir(t, filepath.Join(node.Root, "home", "bob"))
	mustWrite(t, filepath.Join(node.Root, "home", "bob", "notes"), []byte("keep me"), 0o600)
	spec := model.Spec{"managehome": true, "uid": 2100}
	ch, err := r.Converge(ctx, Request{Kind: "user", Name: "bob", Node: node, Spec: spec})
	require.NoError(t, err)
	require.Equal(t, model.OutcomeCreated, ch.Outcome, ch.Report)
	assert.Nil(t, ch.After.Outputs["homeCreated"])
	require.NoError(t, r.Compensate(ctx, Request{Kind: "user", Name: "bob", Node: node, Spec: spec}, stored(t, ch)))
	assert.Empty(t, accountLine(t, node, "passwd", "bob"))
	data, err := os.ReadFile(filepath.Join(node.Root, "home", "bob", "notes"))
	require.NoError(t, err, "a home the apply did not make stays")
	assert.Equal(t, "keep me", string(data))
}

func TestUserDeleteRollbackRecreates(t *testing.T) {
	ctx := context.Background()
	r := localRegistry(t)
	node := accountsNode(t)
	spec := model.Spec{"uid": 2200, "shell": "/bin/bash", "comment": "Carol", "password": hashOne, "groups": []any{"users"}}
	_, err := r.Converge(ctx, Request{Kind: "user", Name: "carol", Node: node, Spec: spec, Secrets: []string{hashOne}})
	require.NoError(t, err)
	present := accountSnap(t, node)
	gone, err := r.Converge(ctx, Request{Kind: "user", Name: "carol", Node: node, Spec: model.Spec{"ensure": "absent"}})
	require.NoError(t, err)
	require.Equal(t, model.OutcomeDeleted, gone.Outcome, gone.Report)
	assert.Empty(t, accountLine(t, node, "passwd", "carol"))
	require.NoError(t, r.Compensate(ctx, Request{Kind: "user", Name: "carol", Node: node, Spec: model.Spec{"ensure": "absent"}}, stored(t, gone)))
	assert.Equal(t, present["passwd"], accountSnap(t, node)["passwd"])
	assert.Equal(t, present["shadow"], accountSnap(t, node)["shadow"], "the hash comes back")
	assert.Contains(t, accountLine(t, node, "group", "users"), "carol")
}

func TestAccountsRefusals(t *testing.T) {
	ctx := context.Background()
	node := accountsNode(t)
	tests := []struct {
		name, kind, res string
		spec            model.Spec
		secrets         []string
		want            string
	}{
		{name: "password not from a secret", kind: "user", res: "dave", spec: model.Spec{"password": hashOne}, want: "must be given as a secret"},
		{name: "bad user name", kind: "user", res: "-rf", spec: model.Spec{}, want: "not an account name"},
		{name: "colon in comment", kind: "user", res: "dave", spec: model.Spec{"comment": "a:b"}, want: "must not contain ':'"},
		{name: "relative home", kind: "user", res: "dave", spec: model.Spec{"home": "home/dave"}, want: "absolute path"},
		{name: "unknown attribute", kind: "unix_group", res: "g", spec: model.Spec{"members": []any{"x"}}, want: "unknown attribute"},
		{name: "negative gid", kind: "unix_group", res: "g", spec: model.Spec{"gid": -1}, want: "out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := accountSnap(t, node)
			_, err := localRegistry(t).Converge(ctx, Request{Kind: tt.kind, Name: tt.res, Node: node, Spec: tt.spec, Secrets: tt.secrets})
			require.Error(t, err)
			assert.True(t, IsConfigError(err), "%v is a config error", err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "cairnsalt")
			assert.Equal(t, before, accountSnap(t, node))
		})
	}
}

func TestAccountsListExportRoundTrip(t *testing.T) {
	ctx := context.Background()
	r := localRegistry(t)
	node := accountsNode(t)
	for _, g := range []string{"devs", "ops"} {
		_, err := r.Converge(ctx, Request{Kind: "unix_group", Name: g, Node: node, Spec: model.Spec{}})
		require.NoError(t, err)
	}
	_, err := r.Converge(ctx, Request{Kind: "user", Name: "erin", Node: node,
		Spec:    model.Spec{"gid": "devs", "groups": []any{"ops", "users"}, "home": "/srv/erin", "shell": "/bin/bash", "comment": "Erin", "password": hashOne},
		Secrets: []string{hashOne}})
	require.NoError(t, err)

	users, err := r.List(ctx, "user", node, ListQuery{})
	require.NoError(t, err)
	require.Len(t, users, 1, "only regular users by default: %+v", users)
	assert.Equal(t, "erin", users[0].Name)
	assert.Equal(t, []any{"ops", "users"}, users[0].Spec["groups"])
	assert.NotContains(t, users[0].Spec, "password")
	all, err := r.List(ctx, "user", node, ListQuery{Spec: model.Spec{"system": true}})
	require.NoError(t, err)
	assert.Len(t, all, 4, "root, daemon, nobody, erin")
	byName, err := r.List(ctx, "user", node, ListQuery{Names: []string{"daemon", "missing"}})
	require.NoError(t, err)
	require.Len(t, byName, 1)
	assert.Equal(t, "daemon", byName[0].Name)
	groups, err := r.List(ctx, "unix_group", node, ListQuery{})
	require.NoError(t, err)
	require.Len(t, groups, 2)

	// What is exported applies as a no-op over the same accounts.
	for _, l := range append(users, groups...) {
		kind := "user"
		if _, isUser := l.Spec["shell"]; !isUser {
			kind = "unix_group"
		}
		ch, err := r.Converge(ctx, Request{Kind: kind, Name: l.Name, Node: node, Spec: l.Spec})
		require.NoError(t, err)
		assert.Equal(t, model.ActionNoop, ch.Action, "%s/%s exported then applied: %s", kind, l.Name, ch.Report)
	}
}
