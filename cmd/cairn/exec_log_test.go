package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

// TestExecShowLogLevels applies a file and a file marked meta.noop, then
// reads the execution's messages with Puppet's levels: in exec show (by
// --log-level), in its JSON (each step's log and noop marker, the
// report's counts) and in the execution's events.
func TestExecShowLogLevels(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{temporal: true})
	id := s.stack("motd")
	root := s.path("target")
	require.NoError(t, os.Mkdir(root, 0o755))
	pkg := s.file("motd.yaml", `apiVersion: cairn/v1
kind: File
metadata: {name: motd}
spec: {path: `+root+`/motd, content: hello}
---
apiVersion: cairn/v1
kind: File
metadata: {name: pinned}
spec: {path: `+root+`/pinned, content: later}
meta: {noop: true}
`)
	exID := strings.TrimSpace(s.run("apply", "--stack", id, pkg, "--wait=false").expect(t, 0).stdout)
	s.waitExecution(exID, "finished", (*model.Execution).Finished)
	_, err := os.Stat(filepath.Join(root, "pinned"))
	require.ErrorIs(t, err, os.ErrNotExist, "meta.noop changes nothing")

	t.Run("default level notice", func(t *testing.T) {
		out := s.run("exec", "show", exID).expect(t, 0).stdout
		assert.Contains(t, out, "Notice: file/motd: created\n")
		assert.Contains(t, out, "Notice: file/pinned: would be created (noop)\n")
		assert.Contains(t, out, "Messages:")
		assert.NotContains(t, out, "Debug:")
	})
	t.Run("debug", func(t *testing.T) {
		out := s.run("exec", "show", exID, "--log-level", "debug").expect(t, 0).stdout
		assert.Regexp(t, `Debug: file/motd: evaluated in [0-9.]+ seconds`, out)
		assert.Contains(t, out, "Notice: file/motd: created\n")
	})
	t.Run("err hides notices", func(t *testing.T) {
		out := s.run("exec", "show", exID, "--log-level", "err").expect(t, 0).stdout
		assert.NotContains(t, out, "Notice:")
		s.run("exec", "show", exID, "--log-level", "loud").expect(t, 1).hasErr(t, `unknown log level "loud"`)
	})
	t.Run("json", func(t *testing.T) {
		var ex model.Execution
		out := s.run("exec", "show", exID, "-o", "json", "--log-level", "debug").expect(t, 0).stdout
		require.NoError(t, json.Unmarshal([]byte(out), &ex), out)
		steps := map[string]model.StepProgress{}
		for _, st := range ex.Steps {
			steps[st.ID] = st
		}
		require.Contains(t, steps, "file/pinned", out)
		assert.True(t, steps["file/pinned"].Noop, "a meta.noop step is marked noop")
		assert.False(t, steps["file/motd"].Noop)
		assert.Contains(t, steps["file/motd"].Log, model.LogMessage{Level: model.LevelNotice, Message: "created"})
		require.NotNil(t, ex.Report)
		assert.Equal(t, 2, ex.Report.Log[model.LevelNotice], "two notices, one a step: %v", ex.Report.Log)
		assert.Equal(t, 2, ex.Report.Log[model.LevelDebug], "each step's time: %v", ex.Report.Log)
	})
	t.Run("events", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		logs := map[string][]model.LogMessage{}
		noop := map[string]bool{}
		require.NoError(t, s.client.Events(ctx, exID, func(ev client.Event) error {
			if ev.Type == client.EventStep {
				logs[ev.Step.ID], noop[ev.Step.ID] = ev.Step.Log, ev.Step.Noop
			}
			return nil
		}))
		assert.Contains(t, logs["file/motd"], model.LogMessage{Level: model.LevelNotice, Message: "created"})
		assert.Contains(t, logs["file/pinned"], model.LogMessage{Level: model.LevelNotice, Message: "would be created (noop)"})
		assert.True(t, noop["file/pinned"])
	})
}

// TestGraphExecuteNoopMarksSteps executes a graph with --noop: nothing
// runs, and each step is marked noop with its log saying what would.
func TestGraphExecuteNoopMarksSteps(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{temporal: true})
	cluster := s.cluster(model.Node{ID: "n1", Name: "n1", Roles: []string{"controller"}})
	flag := s.path("ran")
	graph := "apiVersion: cairn/v1\nkind: Graph\nmetadata: {name: touch, type: touch}\ntasks:\n" +
		"  - id: touch\n    type: shell\n    roles: ['*']\n    parameters: {cmd: 'touch " + flag + "'}\n"
	s.run("graph", "upload", "--cluster", cluster, "--type", "touch", "--file", s.file("touch.yaml", graph)).expect(t, 0)
	exID := strings.TrimSpace(s.run("graph", "execute", "--cluster", cluster, "--type", "touch", "--noop", "--wait=false").expect(t, 0).stdout)
	ex := s.waitExecution(exID, "finished", (*model.Execution).Finished)
	require.Equal(t, model.ExecCompleted, ex.Status, "%+v", ex)
	_, err := os.Stat(flag)
	require.ErrorIs(t, err, os.ErrNotExist, "--noop runs nothing")

	var shown model.Execution
	out := s.run("exec", "show", exID, "-o", "json").expect(t, 0).stdout
	require.NoError(t, json.Unmarshal([]byte(out), &shown), out)
	require.Len(t, shown.Steps, 1, out)
	assert.True(t, shown.Steps[0].Noop, out)
	assert.Contains(t, shown.Steps[0].Log, model.LogMessage{Level: model.LevelNotice, Message: "would run (noop)"}, out)
	s.run("exec", "show", exID).expect(t, 0).has(t, "Notice: "+shown.Steps[0].ID+": would run (noop)")
}
