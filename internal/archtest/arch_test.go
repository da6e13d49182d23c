package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestArchitecture checks the module's production imports against rules;
// there are no exceptions.
func TestArchitecture(t *testing.T) {
	imports := moduleImports(t)
	require.Contains(t, imports, module+"/api", "go list did not list the module's packages")
	for _, v := range check(rules, imports) {
		t.Errorf("forbidden import %s", v)
	}
}

// moduleImports lists every package of the module with the packages its
// non-test files import, as go list reports them. Cost: one go list of
// the module, a few seconds on a cold build cache.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	require.NoError(t, err, "the go command is needed to list the module's imports")
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	cmd := exec.CommandContext(t.Context(), gobin, "list", "-json=ImportPath,Imports,Error", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list: %s", stderr.String())
	imports := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Imports    []string
			Error      *struct{ Err string }
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err, "decode go list output")
		}
		require.Nil(t, p.Error, "go list %s", p.ImportPath)
		imports[p.ImportPath] = p.Imports
	}
	return imports
}

func TestCheckReportsAForbiddenEdgeWithItsRule(t *testing.T) {
	imports := map[string][]string{
		module + "/api":        {"context", module + "/model", module + "/starter", module + "/activities"},
		module + "/activities": {module + "/providers"},
	}
	got := check(rules, imports)
	require.Len(t, got, 1, "violations: %v", got)
	assert.Equal(t, edge{"api", "activities"}, got[0].edge)
	assert.Equal(t, rules[0].why, got[0].why, "the violation carries the sentence of the rule it breaks")
	assert.True(t, strings.HasPrefix(got[0].String(), "api -> activities: api talks to starter"), "message %q", got[0])
}

func TestCheckRules(t *testing.T) {
	tests := []struct {
		name    string
		from    string
		imports []string
		want    []edge
	}{
		{"a leaf imports no Cairn package", "dag", []string{"slices", module + "/model"}, []edge{{"dag", "model"}}},
		{"expr may import model", "expr", []string{module + "/model"}, nil},
		{"expr imports nothing else of Cairn", "expr", []string{module + "/kinds"}, []edge{{"expr", "kinds"}}},
		{"prepare does not talk to Temporal", "prepare", []string{"go.temporal.io/sdk/client"}, []edge{{"prepare", "go.temporal.io/sdk/client"}}},
		{"prepare does not serve HTTP", "prepare/steps", []string{"github.com/labstack/echo/v4"}, []edge{{"prepare/steps", "github.com/labstack/echo/v4"}}},
		{"a rule on a package covers the packages below it", "workflows/graph", []string{module + "/store"}, []edge{{"workflows/graph", "store"}}},
		{"nothing imports the composition root", "graphs", []string{module + "/server"}, []edge{{"graphs", "server"}}},
		{"the composition root imports itself", "cmd/cairn", []string{module + "/server", module + "/worker"}, nil},
		{"a pattern names a package, not a prefix of its name", "apiary", []string{module + "/activities"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []edge
			for _, v := range check(rules, map[string][]string{module + "/" + tt.from: tt.imports}) {
				got = append(got, v.edge)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
