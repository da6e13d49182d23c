package kinds

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// messages renders spec errors as "path: message" for comparison.
func messages(errs []SpecError) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}

func TestFuelTaskTypeParameters(t *testing.T) {
	cat, err := Builtin().WithHooks(TaskEraseNode, TaskMoveToBootstrap, TaskCobblerSync)
	require.NoError(t, err)
	tests := []struct {
		name   string
		typ    string
		params map[string]any
		want   []string // error substrings, in order; none = valid
	}{
		{"sync from rsync", "sync", map[string]any{"src": "rsync://10.20.0.2:/puppet/9.0/modules/", "dst": "/etc/puppet/modules", "timeout": 180}, nil},
		{"sync with Fuel's placeholders", "sync", map[string]any{"src": "rsync://{MASTER_IP}:/puppet/{OPENSTACK_VERSION}/modules/", "dst": "/etc/puppet/modules"}, nil},
		{"sync from a URL without a host", "sync", map[string]any{"src": "rsync:///x", "dst": "/d"}, []string{"parameters.src: rsync:// URL names no host"}},
		{"sync from a directory", "sync", map[string]any{"src": "/srv/mirror", "dst": "etc/puppet", "timeout": "3m"}, nil},
		{"sync needs src and dst", "sync", map[string]any{"timeout": 1}, []string{`missing required field "dst"`, `missing required field "src"`}},
		{"sync refuses other schemes", "sync", map[string]any{"src": "http://x/y", "dst": "/d"}, []string{"parameters.src: want an rsync:// URL or a directory on the node, got scheme http"}},
		{"sync refuses a bad timeout", "sync", map[string]any{"src": "/a", "dst": "/b", "timeout": "soon"}, []string{"parameters.timeout: invalid timeout"}},
		{"copy_files as fuel-library writes it", "copy_files", map[string]any{
			"files":       []any{map[string]any{"src": "/var/lib/fuel/keys/1/nova/nova.pub", "dst": "/var/lib/astute/nova/nova.pub"}},
			"permissions": "0600", "dir_permissions": "0700", "timeout": 180,
		}, nil},
		{"copy_files with numeric modes", "copy_files", map[string]any{
			"files": []any{map[string]any{"src": "/a", "dst": "/b"}}, "permissions": 420, "dir_permissions": 493,
		}, nil},
		{"copy_files bad permissions", "copy_files", map[string]any{
			"files": []any{map[string]any{"src": "/a", "dst": "/b"}}, "permissions": "0999",
		}, []string{"parameters.permissions"}},
		{"copy_files relative src and duplicate dst", "copy_files", map[string]any{
			"files": []any{map[string]any{"src": "a", "dst": "/b"}, map[string]any{"src": "/c", "dst": "/b"}},
		}, []string{"parameters.files[0].src: must be an absolute path", "parameters.files[1].dst: is also the dst of files[0]"}},
		{"copy_files without files", "copy_files", map[string]any{"permissions": "0644"}, []string{`missing required field "files"`}},
		{"copy_files unknown field", "copy_files", map[string]any{"files": []any{map[string]any{"src": "/a", "dst": "/b"}}, "permission": "0644"}, []string{`unknown field "permission"`}},
		{"upload_file with permissions", "upload_file", map[string]any{"path": "/tmp/p.yaml", "data": "x", "permissions": "0640", "dir_permissions": "0750"}, nil},
		{"upload_file mode and permissions both", "upload_file", map[string]any{"path": "/tmp/p.yaml", "data": "x", "mode": "0640", "permissions": "0640"}, []string{`set only one of "mode", "permissions"`}},
		{"reboot", "reboot", map[string]any{"timeout": 900}, nil},
		{"reboot takes only a timeout", "reboot", map[string]any{"timeout": 900, "command": "x"}, []string{`unknown field "command"`}},
		{"master_shell", "master_shell", map[string]any{"cmd": "sh netboot disable", "timeout": 180, "strategy": map[string]any{"type": "one_by_one"}}, nil},
		{"master_shell needs a command", "master_shell", map[string]any{"timeout": 180}, []string{`one of "cmd", "command", "argv" is required`}},
		{"move_to_bootstrap", "move_to_bootstrap", map[string]any{"slave_name": "node-1", "provisioning_info": map[string]any{"a": 1}, "timeout": 180}, nil},
		{"erase_node", "erase_node", map[string]any{"timeout": 180}, nil},
		{"cobbler_sync", "cobbler_sync", map[string]any{}, nil},
		{"hook bad timeout", "erase_node", map[string]any{"timeout": -1}, []string{"parameters.timeout"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := messages(cat.ValidateAt(tt.typ, "parameters", tt.params))
			require.Len(t, got, len(tt.want), "errors: %q", got)
			for i, w := range tt.want {
				assert.Contains(t, got[i], w)
			}
		})
	}
}

func TestHooksNotConfiguredNameTheSetting(t *testing.T) {
	cat := Builtin()
	for _, hook := range Hooks() {
		t.Run(hook, func(t *testing.T) {
			k, ok := cat.Lookup(hook)
			require.True(t, ok, "a hook is a known type, never unknown")
			assert.Equal(t, KindHook, k.Name)
			got := messages(cat.ValidateAt(hook, "parameters", map[string]any{"timeout": 180}))
			want := "parameters: no command is configured for the provisioning hook " + hook + ": set CAIRN_HOOK_" + strings.ToUpper(hook) + " on the server"
			assert.Equal(t, []string{want}, got)
		})
	}
	configured, err := cat.WithHooks(TaskEraseNode)
	require.NoError(t, err)
	assert.Empty(t, configured.ValidateAt(TaskEraseNode, "parameters", nil))
	assert.NotEmpty(t, configured.ValidateAt(TaskCobblerSync, "parameters", nil), "only the configured hook validates")
	assert.NotEmpty(t, cat.ValidateAt(TaskEraseNode, "parameters", nil), "WithHooks leaves the original catalogue alone")
	_, err = cat.WithHooks("format_disk")
	assert.ErrorContains(t, err, `unknown provisioning hook "format_disk"`)
}

func TestFuelTaskSpecs(t *testing.T) {
	cat := Builtin()
	tests := []struct {
		typ      string
		params   map[string]any
		wantKind string
		wantSpec map[string]any
	}{
		{"upload_file", map[string]any{"path": "/tmp/p", "data": "x", "permissions": "0640", "dir_permissions": "0750", "timeout": 180},
			"file", map[string]any{"path": "/tmp/p", "content": "x", "mode": "0640", "dirMode": "0750"}},
		{"master_shell", map[string]any{"cmd": "echo hi", "timeout": 180, "strategy": map[string]any{"type": "one_by_one"}},
			"exec", map[string]any{"command": "echo hi", "timeout": 180}},
		{"erase_node", map[string]any{"timeout": 180, "slave_name": "n1"},
			"hook", map[string]any{"hook": "erase_node", "timeout": 180, "parameters": map[string]any{"slave_name": "n1"}}},
		{"cobbler_sync", nil, "hook", map[string]any{"hook": "cobbler_sync"}},
		{"sync", map[string]any{"src": "/a", "dst": "/b"}, "sync", map[string]any{"src": "/a", "dst": "/b"}},
		{"copy_files", map[string]any{"files": []any{}}, "copy_files", map[string]any{"files": []any{}}},
		{"reboot", map[string]any{"timeout": 900}, "reboot", map[string]any{"timeout": 900}},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			kind, spec, _, err := cat.TaskSpec(tt.typ, tt.params)
			require.NoError(t, err)
			assert.Equal(t, tt.wantKind, kind)
			assert.Equal(t, tt.wantSpec, spec)
		})
	}
}

func TestControlPlaneTaskTypes(t *testing.T) {
	cat := Builtin()
	for typ, want := range map[string]bool{
		"master_shell": true, "erase_node": true, "move_to_bootstrap": true, "cobbler_sync": true,
		"shell": false, "sync": false, "copy_files": false, "reboot": false, "exec": false, "nope": false,
	} {
		assert.Equal(t, want, cat.RunsOnControlPlane(typ), typ)
	}
	spec := map[string]any{"command": "x", "env": map[string]any{"A": "b"}}
	env := spec["env"].(map[string]any)
	cat.ForNode("master_shell", spec, "node-2")
	assert.Equal(t, map[string]any{"A": "b", NodeEnv: "node-2"}, spec["env"])
	assert.Equal(t, map[string]any{"A": "b"}, env, "the map the spec shared is not changed")
	hook := map[string]any{"hook": "erase_node"}
	cat.ForNode("erase_node", hook, "node-3")
	assert.Equal(t, "node-3", hook["node"])
}

func TestUnknownTaskTypeDidYouMean(t *testing.T) {
	cat := Builtin()
	for typ, want := range map[string]string{
		"sycn": "sync", "copy_file": "copy_files", "master_shel": "master_shell",
		"erase_nodes": "erase_node", "reboott": "reboot", "move_to_bootstrp": "move_to_bootstrap",
	} {
		assert.Equal(t, want, cat.Suggest(typ), typ)
	}
	_, ok := cat.Lookup("format_disk")
	assert.False(t, ok)
}

func TestHooksConfiguredElsewhereWarn(t *testing.T) {
	offline := Builtin().WithHooksElsewhere()
	for _, hook := range Hooks() {
		t.Run(hook, func(t *testing.T) {
			assert.Empty(t, offline.ValidateAt(hook, "parameters", map[string]any{"timeout": 180}), "offline, a hook with no command is no error")
			assert.Equal(t, "no command is configured here for the provisioning hook "+hook+": the server that executes this graph must set CAIRN_HOOK_"+strings.ToUpper(hook)+", or refuses it", offline.HookWarning(hook))
			assert.Empty(t, Builtin().HookWarning(hook), "the server's catalogue reports an error, not a warning")
		})
	}
	configured, err := offline.WithHooks(TaskEraseNode)
	require.NoError(t, err)
	assert.Empty(t, configured.HookWarning(TaskEraseNode), "configured here: nothing to warn of")
	assert.NotEmpty(t, configured.HookWarning(TaskCobblerSync), "WithHooks keeps the catalogue's mode")
	assert.NotEmpty(t, offline.ValidateAt(TaskEraseNode, "parameters", map[string]any{"timeout": -1}), "other rules still apply")
	assert.Empty(t, offline.HookWarning(TaskMasterShell))
}
