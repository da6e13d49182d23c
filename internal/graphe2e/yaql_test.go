package graphe2e

import (
	"context"
	"maps"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// settingsStore keeps clusters' settings beside a store, for a store that
// does not keep them itself.
type settingsStore struct {
	store.Store
	mu       sync.Mutex
	settings map[string]map[string]any
}

func (s *settingsStore) PutCluster(ctx context.Context, c *model.Cluster) error {
	s.mu.Lock()
	s.settings[c.ID] = maps.Clone(c.Settings)
	s.mu.Unlock()
	return s.Store.PutCluster(ctx, c)
}

func (s *settingsStore) GetCluster(ctx context.Context, id string) (*model.Cluster, error) {
	c, err := s.Store.GetCluster(ctx, id)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.Settings == nil {
		c.Settings = maps.Clone(s.settings[id])
	}
	return c, nil
}

// A yaql condition compares the node's deployment data with its last
// successful run's: changed($.x) skips the task when the cluster's setting
// is as it was, and runs it when it changed. A legacy condition reads the
// settings as stored; a yaql parameter value is evaluated per node.
func TestYAQLConditionsFollowClusterSettings(t *testing.T) {
	h := newHarness(t, harnessOptions{wrap: func(st store.Store) store.Store {
		return &settingsStore{Store: st, settings: map[string]map[string]any{}}
	}}, localNodes()...)
	h.putGraph(model.LayerRelease, "rel", "default", `
- id: config
  type: shell
  roles: [compute]
  condition: {yaql_exp: "changed($.x)"}
  parameters: {cmd: "echo x >> config.log"}
- id: debug
  type: shell
  roles: [compute]
  requires: [config]
  condition: "settings:common.debug.value == true"
  parameters:
    cmd: {yaql_exp: "concat('echo ', $.uid, ' ', $.name, ' >> debug.log')"}
`)
	ctx := context.Background()
	setSettings := func(x int, debug bool) {
		t.Helper()
		c, err := h.st.GetCluster(ctx, h.cluster)
		require.NoError(t, err)
		c.Settings = map[string]any{"x": x, "common": map[string]any{"debug": map[string]any{"value": debug}}}
		require.NoError(t, h.st.PutCluster(ctx, c))
	}
	lines := func(node, file string) []string {
		text := strings.TrimSpace(readFile(t, filepath.Join(h.root(node), file)))
		if text == "" {
			return nil
		}
		return strings.Split(text, "\n")
	}
	steps := []struct {
		name         string
		x            int
		debug        bool
		config, logs int // lines of config.log and debug.log on each compute node
	}{
		{"first run: no previous data, everything changed", 1, false, 1, 0},
		{"nothing changed: config skipped", 1, false, 1, 0},
		{"the setting changed: config runs, debug on", 2, true, 2, 1},
		{"nothing changed again", 2, true, 2, 2},
	}
	for _, st := range steps {
		setSettings(st.x, st.debug)
		e := h.run(contract.GraphRequest{})
		mustStatus(t, e, model.ExecCompleted)
		for _, n := range []string{"n2", "n3"} {
			require.Len(t, lines(n, "config.log"), st.config, "%s: %s: config.log", st.name, n)
			debug := lines(n, "debug.log")
			require.Len(t, debug, st.logs, "%s: %s: debug.log", st.name, n)
			for _, l := range debug {
				require.Equal(t, n+" "+n, l, "the command was evaluated on the node")
			}
		}
	}
}
