package providers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
)

// serviceFixture is a user systemd with one unit, cairn-web, that appends
// a line to its starts file each time it starts.
type serviceFixture struct {
	sd     testenv.UserSystemd
	reg    *Registry
	starts string
}

func newServiceFixture(t *testing.T) serviceFixture {
	t.Helper()
	sd := testenv.StartUserSystemd(t)
	starts := filepath.Join(sd.Dir, "starts")
	unit := "[Unit]\nDescription=cairn test web\n[Service]\nExecStartPre=/bin/sh -c 'echo started >> " + starts + "'\nExecStart=/bin/sleep 100000\n[Install]\nWantedBy=default.target\n"
	mustWrite(t, filepath.Join(sd.UnitDir, "cairn-web.service"), []byte(unit), 0o644)
	reg := localRegistry(t)
	reg.Register(NewService(sd.Address))
	return serviceFixture{sd: sd, reg: reg, starts: starts}
}

func (f serviceFixture) startCount(t *testing.T) int {
	t.Helper()
	data, err := os.ReadFile(f.starts)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(data), "started\n")
}

func (f serviceFixture) enabled(t *testing.T) bool {
	t.Helper()
	_, err := os.Lstat(filepath.Join(f.sd.UnitDir, "default.target.wants", "cairn-web.service"))
	return err == nil
}

func (f serviceFixture) converge(t *testing.T, spec model.Spec, refresh, noop bool) Change {
	t.Helper()
	ch, err := f.reg.Converge(context.Background(), Request{Kind: "service", Name: "web", Node: Node{Name: "n"}, Spec: spec, Refresh: refresh, Noop: noop})
	require.NoError(t, err, ch.Report)
	return ch
}

func TestServiceOnRealSystemd(t *testing.T) {
	ctx := context.Background()
	f := newServiceFixture(t)
	running := model.Spec{"name": "cairn-web", "ensure": "running", "enable": true}

	plan := f.converge(t, running, false, true)
	assert.Equal(t, model.ActionUpdate, plan.Action, plan.Report)
	assert.Equal(t, "stopped", plan.Before.Attrs["ensure"])
	assert.Equal(t, 0, f.startCount(t), "noop started it")
	assert.False(t, f.enabled(t), "noop enabled it")

	start := f.converge(t, running, false, false)
	require.Equal(t, model.OutcomeUpdated, start.Outcome, start.Report)
	assert.Equal(t, 1, f.startCount(t))
	assert.True(t, f.enabled(t), "enable: true links it into default.target.wants")
	assert.Equal(t, "active", start.After.Outputs["activeState"])

	again := f.converge(t, running, false, false)
	assert.Equal(t, model.ActionNoop, again.Action, again.Report)
	assert.Equal(t, 1, f.startCount(t))

	wouldRestart := f.converge(t, running, true, true)
	assert.True(t, wouldRestart.Refreshed, wouldRestart.Report)
	assert.Equal(t, 1, f.startCount(t), "a noop refresh restarted it")
	restart := f.converge(t, running, true, false)
	assert.True(t, restart.Refreshed, restart.Report)
	assert.Equal(t, true, restart.After.Outputs["restarted"])
	assert.Equal(t, 2, f.startCount(t), "a refresh restarts it once")

	stopped := model.Spec{"name": "cairn-web", "ensure": "stopped"}
	stop := f.converge(t, stopped, true, false)
	require.Equal(t, model.OutcomeUpdated, stop.Outcome, "%s: %+v", stop.Report, stop.Before)
	assert.False(t, stop.Refreshed, "a service to stop is not restarted")
	assert.Equal(t, 2, f.startCount(t))
	assert.Equal(t, "inactive", stop.After.Outputs["activeState"])
	assert.True(t, f.enabled(t), "enable left as it was when not given")

	require.NoError(t, f.reg.Compensate(ctx, Request{Kind: "service", Name: "web", Spec: stopped}, stored(t, stop)))
	assert.Equal(t, 3, f.startCount(t), "undoing the stop starts it again")
	back := f.converge(t, running, false, true)
	assert.Equal(t, model.ActionNoop, back.Action, back.Report)

	require.NoError(t, f.reg.Compensate(ctx, Request{Kind: "service", Name: "web", Spec: running}, stored(t, start)))
	after, err := f.reg.Converge(ctx, Request{Kind: "service", Name: "web", Spec: model.Spec{"name": "cairn-web"}, Noop: true})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"name": "cairn-web.service", "ensure": "stopped", "enable": false}, after.Before.Attrs,
		"undoing the first change stops and disables it")
	assert.False(t, f.enabled(t))

	listed, err := f.reg.List(ctx, "service", Node{}, ListQuery{Names: []string{"cairn-web"}})
	require.NoError(t, err)
	require.Len(t, listed, 1)
	assert.Equal(t, Listed{Name: "cairn-web", Spec: model.Spec{"name": "cairn-web.service", "ensure": "stopped", "enable": false}}, listed[0])
	all, err := f.reg.List(ctx, "service", Node{}, ListQuery{})
	require.NoError(t, err)
	assert.Contains(t, all, listed[0], "the whole listing holds it")
	for _, l := range all {
		ch, err := f.reg.Converge(ctx, Request{Kind: "service", Name: l.Name, Spec: l.Spec, Noop: true})
		require.NoError(t, err)
		assert.Equal(t, model.ActionNoop, ch.Action, "exported %s applied: %s", l.Name, ch.Report)
	}
}

func TestServiceRefusals(t *testing.T) {
	f := newServiceFixture(t)
	tests := []struct {
		name   string
		spec   model.Spec
		config bool
		want   string
	}{
		{name: "unit not found", spec: model.Spec{"name": "cairn-none", "ensure": "running"}, want: "unit cairn-none.service not found"},
		{name: "bad ensure", spec: model.Spec{"name": "cairn-web", "ensure": "absent"}, config: true, want: "want running or stopped"},
		{name: "option as a name", spec: model.Spec{"name": "--all"}, config: true, want: "not a systemd unit name"},
		{name: "path as a name", spec: model.Spec{"name": "../x.service"}, config: true, want: "not a systemd unit name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.reg.Converge(context.Background(), Request{Kind: "service", Name: "s", Spec: tt.spec})
			require.Error(t, err)
			assert.Equal(t, tt.config, IsConfigError(err), "%v", err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Equal(t, 0, f.startCount(t))
		})
	}
}
