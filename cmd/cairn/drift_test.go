package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func TestStackDriftSetShowDelete(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{temporal: true, token: "drift-t0ken"})
	st, err := s.client.CreateStack(context.Background(), model.StackInput{Name: "web"})
	require.NoError(t, err)

	s.run("stack", "drift", "set", "web", "--every", "10m", "--repair").expect(t, 0).
		has(t, "drift-"+st.ID, "every 10m0s", "Repair:", "true", "Overlap:", "skip", "Last check:")
	d, err := s.client.GetDrift(context.Background(), st.ID)
	require.NoError(t, err)
	assert.Equal(t, "10m0s", d.Every)
	assert.True(t, d.Repair)
	assert.False(t, d.Paused)

	s.run("stack", "drift", "set", "web", "--every", "1h", "--pause", "--overlap", "buffer_one").expect(t, 0).
		has(t, "every 1h0m0s (paused)", "buffer_one")
	out := s.run("stack", "drift", "show", "web", "-o", "json").expect(t, 0)
	var shown model.Drift
	require.NoError(t, json.Unmarshal([]byte(out.stdout), &shown), out.stdout)
	assert.Equal(t, st.ID, shown.StackID)
	assert.Equal(t, "1h0m0s", shown.Every)
	assert.True(t, shown.Paused)
	assert.False(t, shown.Repair, "set without --repair keeps repairing")
	assert.Equal(t, "buffer_one", shown.Overlap)

	s.run("stack", "show", "web").expect(t, 0).has(t, "Drift schedule:", "drift-"+st.ID, "(paused)")

	s.run("stack", "drift", "set", "web", "--every", "5ms").expect(t, 1).hasErr(t, "every")
	s.run("stack", "drift", "delete", "web").expect(t, 0).has(t, "drift schedule of stack "+st.ID+" deleted")
	s.run("stack", "drift", "show", "web").expect(t, 1).hasErr(t, "no drift schedule")
	s.run("stack", "show", "web").expect(t, 0)
	assert.NotContains(t, s.run("stack", "show", "web").stdout, "Drift schedule:")
}
