package activities_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/activities"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/providers"
	"github.com/cairn-io/cairn/store"
)

// serviceDocs: two config files notify a systemd service (nginx's shape:
// a main config and a site), which is to run and start at boot.
func serviceDocs(root, conf, site string) string {
	return fmt.Sprintf(`apiVersion: cairn/v1
kind: File
metadata: {name: conf}
spec: {path: %[1]s/web.conf, content: %[2]q}
notify: [Service/web]
---
apiVersion: cairn/v1
kind: File
metadata: {name: site}
spec: {path: %[1]s/site.conf, content: %[3]q}
notify: [Service/web]
---
apiVersion: cairn/v1
kind: Service
metadata: {name: web}
spec: {name: cairn-web, ensure: running, enable: true}
`, root, conf, site)
}

// A config file notifying a service on a real systemd (a user manager):
// the apply that starts it does not restart it too, a changed config
// restarts it once however many files changed, and an apply that changes
// nothing leaves it alone.
func TestConfigFileNotifiesServiceOnRealSystemd(t *testing.T) {
	sd := testenv.StartUserSystemd(t)
	starts := filepath.Join(sd.Dir, "starts")
	unit := "[Service]\nExecStartPre=/bin/sh -c 'echo started >> " + starts + "'\nExecStart=/bin/sleep 100000\n[Install]\nWantedBy=default.target\n"
	require.NoError(t, os.WriteFile(filepath.Join(sd.UnitDir, "cairn-web.service"), []byte(unit), 0o644))
	st, err := store.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "cairn.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	reg := providers.NewRegistry(kinds.Builtin())
	for _, p := range providers.LocalProviders() {
		reg.Register(p)
	}
	reg.Register(providers.NewService(sd.Address))
	f := &fixture{t: t, st: st, acts: activities.New(activities.Deps{Store: st, Registry: reg, Packages: prepare.GraphsLoader{}}), root: t.TempDir()}
	startCount := func() int {
		data, err := os.ReadFile(starts)
		if os.IsNotExist(err) {
			return 0
		}
		require.NoError(t, err)
		return strings.Count(string(data), "started\n")
	}
	stack := f.stack("")
	apply := func(execID, conf, site string) map[string]contract.StepResult {
		t.Helper()
		plan := f.prepare(contract.PrepareInput{ExecutionID: execID, StackID: stack.ID, SnapshotHash: f.snapshot(serviceDocs(f.root, conf, site))})
		require.Len(t, plan.Units, 1)
		res, err := f.acts.ApplyBatch(context.Background(), contract.UnitInput{ExecutionID: execID, Unit: plan.Units[0]})
		require.NoError(t, err)
		return outcomes(res)
	}

	got := apply("exec-svc-1", "v1", "s1")
	assert.Equal(t, model.OutcomeUpdated, got["service/web"].Outcome, got["service/web"].Error)
	assert.False(t, got["service/web"].Refreshed, "the start is its refresh")
	assert.Equal(t, 1, startCount(), "started once")
	_, err = os.Lstat(filepath.Join(sd.UnitDir, "default.target.wants", "cairn-web.service"))
	assert.NoError(t, err, "enabled")

	got = apply("exec-svc-2", "v2", "s2")
	assert.Equal(t, model.OutcomeUpdated, got["file/conf"].Outcome)
	assert.Equal(t, model.OutcomeUpdated, got["file/site"].Outcome)
	assert.True(t, got["service/web"].Refreshed, got["service/web"].Error)
	assert.Equal(t, 2, startCount(), "two changed files restart it once")

	got = apply("exec-svc-3", "v2", "s2")
	assert.Equal(t, model.OutcomeUnchanged, got["service/web"].Outcome)
	assert.False(t, got["service/web"].Refreshed)
	assert.Equal(t, 2, startCount(), "nothing changed: no restart")
}
