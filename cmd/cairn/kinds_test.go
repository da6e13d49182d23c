package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/kinds"
)

// platformKinds is the example kinds directory, as CAIRN_KINDS_DIR names it.
const platformKinds = "../../examples/platform/kinds"

func TestKindsCommands(t *testing.T) {
	t.Setenv("CAIRN_KINDS_DIR", "")
	tests := []struct {
		name string
		args []string
		code int
		out  []string
		err  []string
	}{
		{"list", []string{"kinds", "list"}, 0, []string{"NAME", "TYPE", "exec", "kind", "puppet", "task type", "upload_file"}, nil},
		{"list with a kinds dir", []string{"kinds", "list", "--kinds-dir", platformKinds}, 0, []string{"Label", "derived", "http"}, nil},
		{"describe a kind", []string{"kinds", "describe", "file"}, 0, []string{
			"file (kind)", "Task types mapped onto it: upload_file", "path ", "namevar", "checksum", "read_only",
			"vars", "parameter", "content", "property", "Auto-edges", "runs after directory whose path is a parent of its path",
			"Refresh: ignored"}, nil},
		{"describe exec documents its refresh", []string{"kinds", "describe", "exec"}, 0, []string{
			"refreshOnly", "boolean", "run only when refreshed", "Refresh: runs its refresh command"}, nil},
		{"describe user", []string{"kinds", "describe", "user"}, 0, []string{
			"user (kind)", "useradd", "password", "keyed fingerprint", "managehome", "parameter",
			"runs after unix_group whose name is equal to its gid", "runs after unix_group whose name is equal to its groups"}, nil},
		{"describe unix_group", []string{"kinds", "describe", "unix_group"}, 0, []string{"unix_group (kind)", "groupadd", "gid ", "system"}, nil},
		{"describe service", []string{"kinds", "describe", "service"}, 0, []string{
			"service (kind)", "D-Bus", "enable ", "one of running, stopped | boolean", "Refresh: restarts the service once"}, nil},
		{"describe a task type", []string{"kinds", "describe", "puppet"}, 0, []string{
			"puppet (task type on exec)", "--detailed-exitcodes", "puppet_manifest", "yes", "the manifest puppet apply runs"}, nil},
		{"describe exec documents its exit codes", []string{"kinds", "describe", "EXEC"}, 0, []string{"unchangedReturns", "array of integer", "[0]"}, nil},
		{"describe a derived kind", []string{"kinds", "describe", "bucket", "--kinds-dir", platformKinds}, 0, []string{"Bucket (derived on http)", `base's "body"`, "retentionPeriod"}, nil},
		{"unknown kind", []string{"kinds", "describe", "exe"}, 1, nil, []string{`unknown kind "exe"`, `did you mean "exec"`}},
		{"derived kind without its dir", []string{"kinds", "describe", "Bucket"}, 1, nil, []string{`unknown kind "Bucket"`}},
		{"bad kinds dir", []string{"kinds", "list", "--kinds-dir", "/nonexistent"}, 1, nil, []string{"/nonexistent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runCairn(t, tt.args...).expect(t, tt.code).has(t, tt.out...).hasErr(t, tt.err...)
		})
	}

	t.Run("json", func(t *testing.T) {
		var d kinds.Description
		require.NoError(t, json.Unmarshal([]byte(runCairn(t, "kinds", "describe", "puppet", "-o", "json").expect(t, 0).stdout), &d))
		assert.Equal(t, kinds.TypeTaskType, d.Type)
		assert.Equal(t, kinds.KindExec, d.Base)
		var list struct {
			Kinds []kinds.Description `json:"kinds"`
		}
		require.NoError(t, json.Unmarshal([]byte(runCairn(t, "kinds", "list", "-o", "json").expect(t, 0).stdout), &list))
		assert.Len(t, list.Kinds, len(kinds.Builtin().Names())+len(kinds.Builtin().TaskTypes()))
	})
	t.Run("CAIRN_KINDS_DIR", func(t *testing.T) {
		t.Setenv("CAIRN_KINDS_DIR", platformKinds)
		runCairn(t, "kinds", "describe", "Dashboard").expect(t, 0).has(t, "Dashboard (derived on http)")
	})
}
