package providers

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

// plugScript requires plug creds (extra is optional), and its one action
// prints where the plugs are, 10 000 bytes, and a line on stderr.
const plugScript = `#!/bin/sh
cat > /dev/null
case "$1" in
"") echo '{"plugs":{"creds":{"optional":false},"extra":{"optional":true}},"state_action":{"args":["state"]}}';;
state) if [ -f "$MARK" ]; then echo '{"status":"VALID","state":{"ok":true}}'; else echo '{"status":"STALE","actions":[{"name":"make","args":["make"]}]}'; fi;;
make) echo "creds at $CAIRN_PLUG_CREDS extra=${CAIRN_PLUG_EXTRA:-none}"; head -c 10000 /dev/zero | tr '\0' x; echo; echo "to stderr" >&2; touch "$MARK";;
esac
`

func plugSpec(t *testing.T) (model.Spec, string) {
	t.Helper()
	dir := t.TempDir()
	prog := filepath.Join(dir, "plugged")
	require.NoError(t, os.WriteFile(prog, []byte(plugScript), 0o755))
	mark := filepath.Join(dir, "made")
	return model.Spec{"program": prog, "env": map[string]any{"MARK": mark}}, mark
}

// TestExternalPlugs: a required plug is mounted from the plugs directory
// (a program gets its path in CAIRN_PLUG_<NAME>), an optional one that is
// not there is left out, and without the directory the precheck refuses
// the resource naming the plug and the setting.
func TestExternalPlugs(t *testing.T) {
	t.Run("mounted from the plugs directory", func(t *testing.T) {
		plugs := t.TempDir()
		require.NoError(t, os.Mkdir(filepath.Join(plugs, "creds"), 0o755))
		f := newExtFixture(t, ExternalOptions{PlugsDir: plugs})
		spec, mark := plugSpec(t)
		require.NoError(t, f.reg.Precheck(context.Background(), Request{Kind: "external", Name: "p", Spec: spec}))
		ch := f.converge(t, Request{Name: "p", Spec: spec})
		assert.Equal(t, model.OutcomeCreated, ch.Outcome)
		assert.FileExists(t, mark)
		assert.Contains(t, ch.After.Log, "[make]\ncreds at "+filepath.Join(plugs, "creds")+" extra=none\n")
	})
	t.Run("refused without it", func(t *testing.T) {
		f := newExtFixture(t, ExternalOptions{})
		spec, mark := plugSpec(t)
		err := f.reg.Precheck(context.Background(), Request{Kind: "external", Name: "p", Spec: spec})
		require.Error(t, err)
		assert.True(t, IsConfigError(err))
		assert.Contains(t, err.Error(), `requires plug "creds": CAIRN_PLUGS_DIR is not set`)
		assert.NotContains(t, err.Error(), "extra", "an optional plug is not required")
		assert.NoFileExists(t, mark)
	})
	t.Run("a plug's name is one path component", func(t *testing.T) {
		p := NewExternal(ExternalOptions{PlugsDir: t.TempDir()}).(*externalProvider)
		_, err := p.mountPlugs(map[string]extPlug{"../etc": {}}, false)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "not a plain name")
	})
}

// TestExternalActionLog: what an action prints is kept bounded, head and
// tail of each stream with a notice naming the bounds, stderr included.
func TestExternalActionLog(t *testing.T) {
	plugs := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(plugs, "creds"), 0o755))
	f := newExtFixture(t, ExternalOptions{PlugsDir: plugs})
	spec, _ := plugSpec(t)
	ch := f.converge(t, Request{Name: "p", Spec: spec})
	assert.Contains(t, ch.After.Log, "bytes cut: only the first 1024 and the last 1024 bytes are kept")
	assert.Contains(t, ch.After.Log, "to stderr\n")
	assert.Less(t, len(ch.After.Log), 5<<10, "bounded whatever the action printed")
	assert.Empty(t, ch.After.Outputs["log"], "the log is not an output dependents read")
}
