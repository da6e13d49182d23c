package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// extBin is the directory holding the test provider programs built from
// testdata/ext by TestMain.
var extBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cairn-ext-programs-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := 1
	if err := buildExtPrograms(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		extBin = dir
		code = m.Run()
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func buildExtPrograms(dir string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("the go tool builds the test provider programs: %w", err)
	}
	entries, err := os.ReadDir(filepath.Join("testdata", "ext"))
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		cmd := exec.Command(goBin, "build", "-o", filepath.Join(dir, e.Name()), "./testdata/ext/"+e.Name())
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building test program %s: %v\n%s", e.Name(), err, out)
		}
	}
	return nil
}

// extFixture is a registry with the external provider and a directory
// for the jsonfile program's files and call log.
type extFixture struct {
	reg  *Registry
	prov *externalProvider
	dir  string
	log  string
}

func newExtFixture(t *testing.T, opts ExternalOptions) *extFixture {
	t.Helper()
	prov := NewExternal(opts).(*externalProvider)
	reg := NewRegistry(kinds.Builtin())
	reg.Register(prov)
	dir := t.TempDir()
	return &extFixture{reg: reg, prov: prov, dir: dir, log: filepath.Join(dir, "calls.log")}
}

// jsonfile is a spec for the well-behaved program managing name.json.
func (f *extFixture) jsonfile(name string, content map[string]any) model.Spec {
	return model.Spec{
		"program": filepath.Join(extBin, "jsonfile"),
		"config":  map[string]any{"dir": filepath.Join(f.dir, "files"), "name": name, "content": content},
		"env":     map[string]any{"EXT_LOG": f.log, "EXT_MARK": "from-env"},
	}
}

// calls counts the logged invocations per phase.
func (f *extFixture) calls(t *testing.T) map[string]int {
	t.Helper()
	raw, err := os.ReadFile(f.log)
	if err != nil {
		require.True(t, os.IsNotExist(err), "%v", err)
	}
	out := map[string]int{}
	for _, line := range strings.Fields(string(raw)) {
		out[line]++
	}
	return out
}

func (f *extFixture) fileContent(t *testing.T, name string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(f.dir, "files", name+".json"))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	return m
}

func (f *extFixture) converge(t *testing.T, req Request) Change {
	t.Helper()
	req.Kind = "external"
	ch, err := f.reg.Converge(context.Background(), req)
	require.NoError(t, err, "converge")
	return ch
}

func TestExternalLifecycle(t *testing.T) {
	f := newExtFixture(t, ExternalOptions{})
	v1 := f.jsonfile("site", map[string]any{"title": "one", "n": 1})
	v2 := f.jsonfile("site", map[string]any{"title": "two", "n": 2})
	steps := []struct {
		name       string
		spec       model.Spec
		noop       bool
		action     model.Action
		outcome    model.Outcome
		wantFile   map[string]any
		wantWrites int // write actions run so far
		pending    string
	}{
		{"dry-run of a create shows nothing written", v1, true, model.ActionCreate, model.OutcomeUnchanged, nil, 0, ""},
		{"create", v1, false, model.ActionCreate, model.OutcomeCreated, map[string]any{"title": "one", "n": 1.0}, 1, ""},
		{"reapply is a noop", v1, false, model.ActionNoop, model.OutcomeUnchanged, map[string]any{"title": "one", "n": 1.0}, 1, ""},
		{"dry-run of an update shows the actions", v2, true, model.ActionUpdate, model.OutcomeUnchanged, map[string]any{"title": "one", "n": 1.0}, 1, "update"},
		{"update", v2, false, model.ActionUpdate, model.OutcomeUpdated, map[string]any{"title": "two", "n": 2.0}, 2, "update"},
		{"update again is a noop", v2, false, model.ActionNoop, model.OutcomeUnchanged, map[string]any{"title": "two", "n": 2.0}, 2, ""},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			ch := f.converge(t, Request{Name: "site", Spec: s.spec, Noop: s.noop})
			require.Equal(t, s.action, ch.Action, "%s/%s, want %s/%s (%s)", ch.Action, ch.Outcome, s.action, s.outcome, ch.Report)
			require.Equal(t, s.outcome, ch.Outcome, "%s/%s, want %s/%s (%s)", ch.Action, ch.Outcome, s.action, s.outcome, ch.Report)
			got := f.fileContent(t, "site")
			require.True(t, EqualValues(got, s.wantFile), "file holds %v, want %v", got, s.wantFile)
			require.Equal(t, s.wantWrites, f.calls(t)["write"], "write action ran")
			if s.pending != "" {
				// The diff: the pending actions (desired none), and the
				// config against the state the program reports.
				require.Len(t, ch.Changes, 2, "changes %+v, want actions and config", ch.Changes)
				require.Equal(t, "actions", ch.Changes[0].Path, "changes %+v, want actions and config", ch.Changes)
				require.Equal(t, "config", ch.Changes[1].Path, "changes %+v, want actions and config", ch.Changes)
				old, _ := json.Marshal(ch.Changes[0].Old)
				require.Contains(t, string(old), `"name":"`+s.pending+`"`, "pending actions %s lack %q and its description", old, s.pending)
				require.Contains(t, string(old), "site.json", "pending actions %s lack %q and its description", old, s.pending)
				stale, _ := ch.Changes[1].Old.(map[string]any)
				require.True(t, EqualValues(stale["content"], map[string]any{"title": "one", "n": 1}), "config change from %v, want the stale state", ch.Changes[1].Old)
				require.Contains(t, ch.Report, "actions", "report %q does not show the actions", ch.Report)
			}
			if s.action != model.ActionNoop && !s.noop {
				require.Equal(t, "from-env", ch.After.Outputs["marker"], "outputs %v (id %q): want the VALID state, env passed through", ch.After.Outputs, ch.After.ID)
				require.Equal(t, "site", ch.After.ID, "outputs %v (id %q): want the VALID state, env passed through", ch.After.Outputs, ch.After.ID)
			}
		})
	}
	got := f.calls(t)["init"]
	require.Equal(t, 1, got, "init ran %d times, want once per program", got)

	t.Run("delete", func(t *testing.T) {
		canon, err := f.prov.Canonicalize(v2)
		require.NoError(t, err)
		have, err := f.prov.Read(context.Background(), Env{Name: "site"}, canon)
		require.NoError(t, err)
		require.NoError(t, f.prov.DeleteSpec(context.Background(), Env{Name: "site"}, canon, have))
		got := f.fileContent(t, "site")
		require.Nil(t, got, "file still holds")
		// Deleting what is gone does nothing.
		have, _ = f.prov.Read(context.Background(), Env{Name: "site"}, canon)
		require.False(t, have.Exists, "read after delete reports the object")
		require.NoError(t, f.prov.DeleteSpec(context.Background(), Env{Name: "site"}, canon, have))
		require.Equal(t, 1, f.calls(t)["delete"], "delete action ran")
		// Without its spec a delete cannot run the program.
		err = f.prov.Delete(context.Background(), Env{Name: "site"}, State{Exists: true, ID: "site"})
		require.Error(t, err, "delete without spec")
		require.True(t, IsConfigError(err), "delete without spec: %v", err)
		require.Contains(t, err.Error(), "without its spec", "delete without spec: %v", err)
	})
}

func TestExternalCompensation(t *testing.T) {
	tests := []struct {
		name    string
		before  map[string]any // nil: the file does not exist
		want    map[string]any
		delete  bool
		restore bool
	}{
		{"create is deleted", nil, map[string]any{"v": "new"}, false, false},
		{"update is restored", map[string]any{"v": "old"}, map[string]any{"v": "new"}, false, true},
		{"delete is restored", map[string]any{"v": "old"}, nil, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newExtFixture(t, ExternalOptions{})
			if tt.before != nil {
				f.converge(t, Request{Name: "c", Spec: f.jsonfile("c", tt.before)})
			}
			req := Request{Kind: "external", Name: "c", Spec: f.jsonfile("c", tt.want), Delete: tt.delete}
			if tt.delete {
				req.Spec = f.jsonfile("c", tt.before)
			}
			ch := f.converge(t, req)
			got := f.fileContent(t, "c")
			require.True(t, EqualValues(got, tt.want), "after apply: %v", got)
			require.False(t, ch.Irreversible, "change marked irreversible though the program declares delete_action")
			raw, _ := json.Marshal(ch)
			var stored Change
			require.NoError(t, json.Unmarshal(raw, &stored))
			require.NoError(t, f.reg.Compensate(context.Background(), req, stored))
			got = f.fileContent(t, "c")
			require.True(t, EqualValues(got, tt.before), "after compensation the file holds %v, want %v", got, tt.before)
			require.Equal(t, tt.restore, f.calls(t)["restore"] > 0, "restore ran")
		})
	}
}

func TestExternalNoDeleteOrRestore(t *testing.T) {
	f := newExtFixture(t, ExternalOptions{})
	spec := model.Spec{"program": []any{filepath.Join(extBin, "misbehave"), "plain"}}
	canon, err := f.prov.Canonicalize(spec)
	require.NoError(t, err)
	have, err := f.prov.Read(context.Background(), Env{Name: "p"}, canon)
	require.NoError(t, err, "read: %+v %v", have, err)
	require.True(t, have.Exists, "read: %+v %v", have, err)
	require.False(t, f.prov.Reversible(canon), "reversible though no delete_action is declared")
	err = f.prov.DeleteSpec(context.Background(), Env{Name: "p"}, canon, have)
	require.Error(t, err, "delete")
	require.True(t, IsConfigError(err), "delete: %v", err)
	require.Contains(t, err.Error(), "declares no delete_action", "delete: %v", err)
	for _, ch := range []Change{
		{Action: model.ActionCreate, Outcome: model.OutcomeCreated, After: have},
		{Action: model.ActionUpdate, Outcome: model.OutcomeUpdated, Before: have, After: have},
	} {
		err := f.prov.Compensate(context.Background(), Env{Name: "p"}, canon, ch)
		require.ErrorIs(t, err, ErrIrreversible, "compensate %s: %v, want ErrIrreversible", ch.Action, err)
	}
}

func TestExternalMisbehaviour(t *testing.T) {
	tests := []struct {
		mode   string
		phase  string   // the phase the error names
		want   []string // in the message
		config bool     // not retryable
		apply  bool     // fails in Apply rather than Read
	}{
		{"badjson-init", "init", []string{"stdout is not one JSON value", `"Starting provider v1.2... {oops"`}, true, false},
		{"two-values", "init", []string{"more than one JSON value"}, true, false},
		{"shape-init", "init", []string{"breaks the protocol", "at /state_action/args", "array"}, true, false},
		{"no-state-action", "init", []string{"missing property", "state_action"}, true, false},
		{"exit-init", "init", []string{"exited 3", "cannot reach the cloud API"}, false, false},
		{"required-plug", "init", []string{`requires plug "credentials"`}, true, false},
		{"bad-config-schema", "init", []string{"config_schema does not compile"}, true, false},
		{"badjson-state", "state", []string{"stdout is not one JSON value", "unexpected EOF"}, true, false},
		{"shape-state", "state", []string{"at /actions: not allowed here"}, true, false},
		{"unknown-status", "state", []string{"at /status", "VALID"}, true, false},
		{"stale-no-actions", "state", []string{"at /actions", "minItems"}, true, false},
		{"exit-state", "state", []string{"exited 2", "permission denied"}, false, false},
		{"always-stale", "state after actions", []string{"still STALE after running fix; it now asks for fix"}, false, true},
		{"exit-action", "action explode", []string{"exited 7", "explosion in sector 7"}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			f := newExtFixture(t, ExternalOptions{})
			prog := filepath.Join(extBin, "misbehave")
			_, err := f.reg.Converge(context.Background(), Request{Kind: "external", Name: "m", Spec: model.Spec{"program": []any{prog, tt.mode}}})
			require.Error(t, err, "no error")
			msg := err.Error()
			t.Log(msg)
			wantPrefix := fmt.Sprintf("external program %s (%s): ", prog, tt.phase)
			assert.Contains(t, msg, wantPrefix, "error %q does not name program and phase (%q)", msg, wantPrefix)
			for _, w := range tt.want {
				assert.Contains(t, msg, w, "error %q lacks %q", msg, w)
			}
			assert.Equal(t, tt.config, IsConfigError(err), "config")
			var ee *ExternalError
			require.ErrorAs(t, err, &ee, "error %v: want an ExternalError of phase %q", err, tt.phase)
			assert.Equal(t, tt.phase, ee.Phase, "error %v: want an ExternalError of phase %q", err, tt.phase)
			hasApply := strings.Contains(msg, ": create: ") || strings.Contains(msg, ": update: ")
			assert.Equal(t, tt.apply, hasApply, "error %q: failed in apply = %v, want %v", msg, hasApply, tt.apply)
		})
	}
}

func TestExternalTimeoutKillsProcessGroup(t *testing.T) {
	f := newExtFixture(t, ExternalOptions{})
	pidFile := filepath.Join(f.dir, "child.pid")
	spec := model.Spec{
		"program": []any{filepath.Join(extBin, "misbehave"), "sleep-state"},
		"timeout": "2s",
		"env":     map[string]any{"EXT_PIDFILE": pidFile},
	}
	start := time.Now()
	_, err := f.reg.Converge(context.Background(), Request{Kind: "external", Name: "s", Spec: spec})
	require.Error(t, err, "error %v, want a timeout of the state phase", err)
	require.Contains(t, err.Error(), "(state): timed out after 2s; its process group was killed", "error %v, want a timeout of the state phase", err)
	require.False(t, IsConfigError(err), "a timeout is retryable")
	elapsed := time.Since(start)
	require.LessOrEqual(t, elapsed, 30*time.Second, "took %s: the timeout did not stop the program", elapsed)
	raw, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, _ := strconv.Atoi(string(raw))
	deadline := time.Now().Add(10 * time.Second)
	for processAlive(pid) {
		require.False(t, time.Now().After(deadline), "child %d of the timed-out program is still running", pid)
		time.Sleep(20 * time.Millisecond)
	}
}

// processAlive reports whether pid runs (a zombie waiting to be reaped
// does not count).
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

func TestExternalConfigSchema(t *testing.T) {
	tests := []struct {
		name string
		spec func(f *extFixture) model.Spec
		want []string
	}{
		{
			name: "below minimum",
			spec: func(*extFixture) model.Spec {
				return model.Spec{"program": []any{filepath.Join(extBin, "misbehave"), "strict-schema"}, "config": map[string]any{"size": 0}}
			},
			want: []string{"config: does not match the config_schema", "at /size", "minimum"},
		},
		{
			name: "missing required",
			spec: func(*extFixture) model.Spec {
				return model.Spec{"program": []any{filepath.Join(extBin, "misbehave"), "strict-schema"}}
			},
			want: []string{"missing property", "size"},
		},
		{
			name: "pattern of a well-behaved program",
			spec: func(f *extFixture) model.Spec { return f.jsonfile("Not Allowed", map[string]any{}) },
			want: []string{"at /name", "does not match pattern"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newExtFixture(t, ExternalOptions{})
			_, err := f.reg.Converge(context.Background(), Request{Kind: "external", Name: "c", Spec: tt.spec(f)})
			require.Error(t, err, "error %v, want a config error", err)
			require.True(t, IsConfigError(err), "error %v, want a config error", err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w, "error %q lacks %q", err, w)
			}
			assert.Equal(t, 0, f.calls(t)["state"], "the state action ran with an invalid config")
		})
	}
	t.Run("valid config passes", func(t *testing.T) {
		f := newExtFixture(t, ExternalOptions{})
		ch := f.converge(t, Request{Name: "c", Spec: model.Spec{"program": []any{filepath.Join(extBin, "misbehave"), "strict-schema"}, "config": map[string]any{"size": 3}}})
		require.Equal(t, model.ActionNoop, ch.Action, "action")
	})
}

// TestExternalDocker runs an image resource through a fake docker on PATH
// that records its argv and runs the jsonfile program as the "container".
func TestExternalDocker(t *testing.T) {
	binDir := t.TempDir()
	argvLog := filepath.Join(binDir, "argv.log")
	script := fmt.Sprintf(`#!/bin/sh
printf '%%s\n' "$*" >> %q
[ "$1" = run ] && [ "$2" = -i ] && [ "$3" = --rm ] || { echo "unexpected docker call: $*" >&2; exit 125; }
shift 3
while [ $# -gt 0 ]; do
  case "$1" in
    -e) [ -n "$(printenv "$2")" ] || { echo "no value for $2" >&2; exit 125; }; shift 2 ;;
    --entrypoint) shift 2 ;;
    *) break ;;
  esac
done
shift # the image
exec %q "$@"
`, argvLog, filepath.Join(extBin, "jsonfile"))
	require.NoError(t, os.WriteFile(filepath.Join(binDir, "docker"), []byte(script), 0o755))
	t.Setenv("PATH", binDir+string(os.PathListSeparator)+os.Getenv("PATH"))

	f := newExtFixture(t, ExternalOptions{})
	spec := f.jsonfile("img", map[string]any{"k": "v"})
	delete(spec, "program")
	spec["image"] = "acme/jsonfile:1.0"
	ch := f.converge(t, Request{Name: "img", Spec: spec})
	require.Equal(t, model.ActionCreate, ch.Action, "create through docker: %s, file %v", ch.Action, f.fileContent(t, "img"))
	require.True(t, EqualValues(f.fileContent(t, "img"), map[string]any{"k": "v"}), "create through docker: %s, file %v", ch.Action, f.fileContent(t, "img"))
	raw, err := os.ReadFile(argvLog)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	want := []string{
		"run -i --rm -e EXT_LOG -e EXT_MARK acme/jsonfile:1.0",       // init
		"run -i --rm -e EXT_LOG -e EXT_MARK acme/jsonfile:1.0 state", // read
		"run -i --rm -e EXT_LOG -e EXT_MARK acme/jsonfile:1.0 state", // apply re-reads
		"run -i --rm -e EXT_LOG -e EXT_MARK acme/jsonfile:1.0 write", // the create action
		"run -i --rm -e EXT_LOG -e EXT_MARK acme/jsonfile:1.0 state", // expect VALID
	}
	require.Equal(t, strings.Join(want, "\n"), strings.Join(lines, "\n"), "docker calls:\n%s\nwant:\n%s", raw, strings.Join(want, "\n"))
	require.NotContains(t, string(raw), f.log, "env values reached docker's argv")

	t.Run("configured binary", func(t *testing.T) {
		f := newExtFixture(t, ExternalOptions{Docker: filepath.Join(binDir, "docker")})
		spec := f.jsonfile("img2", map[string]any{"k": 2})
		delete(spec, "program")
		spec["image"] = "acme/jsonfile:1.0"
		ch := f.converge(t, Request{Name: "img2", Spec: spec})
		require.Equal(t, model.ActionCreate, ch.Action, "action")
	})
	t.Run("missing docker is a config error", func(t *testing.T) {
		f := newExtFixture(t, ExternalOptions{Docker: filepath.Join(binDir, "no-docker")})
		_, err := f.reg.Converge(context.Background(), Request{Kind: "external", Name: "x", Spec: model.Spec{"image": "acme/x"}})
		require.Error(t, err)
		require.True(t, IsConfigError(err), "error %v", err)
		require.Contains(t, err.Error(), "external program acme/x (init)", "error %v", err)
	})
}

func TestExternalInitCachedAcrossConcurrentSteps(t *testing.T) {
	f := newExtFixture(t, ExternalOptions{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.reg.Converge(context.Background(), Request{Kind: "external", Name: fmt.Sprint("r", i), Spec: f.jsonfile(fmt.Sprint("r", i), map[string]any{"i": i})})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	calls := f.calls(t)
	require.Equal(t, 1, calls["init"], "calls %v: want one init and eight writes", calls)
	require.Equal(t, 8, calls["write"], "calls %v: want one init and eight writes", calls)
	// Another provider (another worker) initializes again.
	other := NewExternal(ExternalOptions{})
	canon, _ := other.Canonicalize(f.jsonfile("r0", map[string]any{"i": 0}))
	st, err := other.Read(context.Background(), Env{Name: "r0"}, canon)
	require.NoError(t, err, "read: %+v %v", st, err)
	require.True(t, st.Exists, "read: %+v %v", st, err)
	got := f.calls(t)["init"]
	require.Equal(t, 2, got, "init ran %d times across two providers, want 2", got)
}

func TestExternalListInstances(t *testing.T) {
	f := newExtFixture(t, ExternalOptions{})
	for _, n := range []string{"b", "a"} {
		f.converge(t, Request{Name: n, Spec: f.jsonfile(n, map[string]any{"name": n})})
	}
	listed, err := f.reg.List(context.Background(), "external", Node{}, ListQuery{Spec: f.jsonfile("any", map[string]any{})})
	require.NoError(t, err)
	require.Len(t, listed, 2, "listed")
	require.Equal(t, "a", listed[0].Name, "listed %+v", listed)
	require.Equal(t, "b", listed[1].Name, "listed %+v", listed)
	only, err := f.reg.List(context.Background(), "external", Node{}, ListQuery{Spec: f.jsonfile("any", map[string]any{}), Names: []string{"b"}})
	require.NoError(t, err, "listed by name: %+v %v", only, err)
	require.Len(t, only, 1, "listed by name: %+v %v", only, err)
	require.Equal(t, "b", only[0].Name, "listed by name: %+v %v", only, err)
	// A listed spec reproduces its instance: converging it is a noop.
	spec := listed[0].Spec
	spec["env"] = map[string]any{"EXT_LOG": f.log}
	ch := f.converge(t, Request{Name: "a", Spec: spec})
	require.Equal(t, model.ActionNoop, ch.Action, "listed spec converges with")
	_, err = f.prov.ListInstances(context.Background(), Env{}, model.Spec{"program": []any{filepath.Join(extBin, "misbehave"), "plain"}})
	require.Error(t, err, "list without list_action")
	require.Contains(t, err.Error(), "declares no list_action", "list without list_action: %v", err)
}

func TestExternalProgramOnNode(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "opt"), 0o755))
	raw, err := os.ReadFile(filepath.Join(extBin, "jsonfile"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "opt", "jsonfile"), raw, 0o755))
	node := Node{Name: "n1", Root: root}
	tests := []struct {
		name    string
		program string
		wantErr string
	}{
		{"relative inside the root", "opt/jsonfile", ""},
		{"absolute means inside the root", "/opt/jsonfile", ""},
		{"escaping the root", "../../opt/jsonfile", "escapes the root"},
		{"missing", "opt/nothing", "not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newExtFixture(t, ExternalOptions{})
			spec := model.Spec{"program": tt.program, "config": map[string]any{"dir": "files", "name": "x", "content": map[string]any{}}}
			ch, err := f.reg.Converge(context.Background(), Request{Kind: "external", Name: "x", Spec: spec, Node: node})
			if tt.wantErr != "" {
				require.Error(t, err, "error %v, want a config error containing %q", err, tt.wantErr)
				require.True(t, IsConfigError(err), "error %v, want a config error containing %q", err, tt.wantErr)
				require.Contains(t, err.Error(), tt.wantErr, "error %v, want a config error containing %q", err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			// The program ran in the node's root: its relative dir is there.
			_, err = os.Stat(filepath.Join(root, "files", "x.json"))
			require.NoError(t, err, "file in the node root: %v (%s)", err, ch.Action)
			if ch.Action == model.ActionNoop {
				require.Equal(t, model.OutcomeUnchanged, ch.Outcome, "file in the node root: %v (%s)", err, ch.Action)
			}
		})
	}
	t.Run("relative path on the control plane", func(t *testing.T) {
		f := newExtFixture(t, ExternalOptions{})
		_, err := f.reg.Converge(context.Background(), Request{Kind: "external", Name: "x", Spec: model.Spec{"program": "opt/jsonfile"}})
		require.Error(t, err)
		require.True(t, IsConfigError(err), "error %v", err)
		require.Contains(t, err.Error(), "needs a node with a root", "error %v", err)
	})
}

func TestExternalCanonicalize(t *testing.T) {
	p := NewExternal(ExternalOptions{})
	tests := []struct {
		name    string
		spec    model.Spec
		want    model.Spec
		wantErr string
	}{
		{
			name: "program string",
			spec: model.Spec{"program": "/bin/prov", "timeout": 90, "env": map[string]any{"A": 1}},
			want: model.Spec{"program": []any{"/bin/prov"}, "config": map[string]any{}, "actions": []any{}, "timeout": "1m30s", "env": map[string]any{"A": "1"}},
		},
		{
			name: "image",
			spec: model.Spec{"image": "acme/x:1", "config": map[string]any{"n": 1.0}},
			want: model.Spec{"image": "acme/x:1", "config": map[string]any{"n": 1}, "actions": []any{}},
		},
		{name: "both", spec: model.Spec{"program": "/x", "image": "y"}, wantErr: "not both"},
		{name: "neither", spec: model.Spec{"config": map[string]any{}}, wantErr: "program: required"},
		{name: "config not an object", spec: model.Spec{"program": "/x", "config": "a"}, wantErr: "config: want an object"},
		{name: "bad timeout", spec: model.Spec{"program": "/x", "timeout": "soon"}, wantErr: "timeout"},
		{name: "actions set", spec: model.Spec{"program": "/x", "actions": []any{"a"}}, wantErr: "reported by the program"},
		{name: "unknown attribute", spec: model.Spec{"program": "/x", "confg": map[string]any{}}, wantErr: `did you mean "config"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.Canonicalize(tt.spec)
			if tt.wantErr != "" {
				require.Error(t, err, "error %v, want a config error containing %q", err, tt.wantErr)
				require.True(t, IsConfigError(err), "error %v, want a config error containing %q", err, tt.wantErr)
				require.Contains(t, err.Error(), tt.wantErr, "error %v, want a config error containing %q", err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.True(t, EqualValues(got, tt.want), "got %v, want %v", got, tt.want)
			again, err := p.Canonicalize(got)
			require.NoError(t, err, "not stable: %v (%v)", again, err)
			require.True(t, EqualValues(again, got), "not stable: %v (%v)", again, err)
		})
	}
}

func TestExternalProtocolSchemas(t *testing.T) {
	proto, err := newExtProtocol()
	require.NoError(t, err)
	tests := []struct {
		schema string
		msg    string
		want   string // "" = valid, else a fragment of the problem
	}{
		{"init-request", `{"name":"a","type":"t","version":"1","verbose":false}`, ""},
		{"init-request", `{"name":"a","type":"t","version":"1"}`, "verbose"},
		{"init-request", `{"name":"a","type":"t","version":"1","verbose":false,"x":1}`, "additional"},
		{"init-response", `{"state_action":{"args":["state"]}}`, ""},
		{"init-response", `{"state_action":{"args":["state"],"image":"other"},"config_schema":true,"plugs":{"p":{"optional":true}},"delete_action":{"args":["d"]}}`, ""},
		{"init-response", `{"state_action":{"arg":["state"]}}`, "at /state_action"},
		{"init-response", `{"state_action":{},"config_schema":"object"}`, "at /config_schema"},
		{"state-request", `{"name":"a","type":"t","version":"1","verbose":true,"config":{}}`, ""},
		{"state-request", `{"name":"a","type":"t","version":"1","verbose":true,"config":[]}`, "at /config"},
		{"state-response", `{"status":"VALID","state":{}}`, ""},
		{"state-response", `{"status":"VALID"}`, "state"},
		{"state-response", `{"status":"VALID","state":{},"staleState":{}}`, "at /staleState: not allowed here"},
		{"state-response", `{"status":"STALE","actions":[{"name":"c","description":"d","image":"i","entrypoint":"/e","args":["a"]}]}`, ""},
		{"state-response", `{"status":"STALE","staleState":null,"actions":[{"name":"c"}]}`, ""},
		{"state-response", `{"status":"STALE","actions":[{"description":"no name"}]}`, "name"},
		{"state-response", `{"status":"STALE","actions":[{"name":"c","args":[1]}]}`, "at /actions/0/args/0"},
		{"state-response", `{"status":"STALE","state":{},"actions":[{"name":"c"}]}`, "at /state: not allowed here"},
		{"state-response", `["VALID"]`, "object"},
		{"list-response", `{"instances":[{"name":"a","config":{}}]}`, ""},
		{"list-response", `{"instances":[{"config":{}}]}`, "name"},
	}
	for _, tt := range tests {
		t.Run(tt.schema+" "+tt.msg, func(t *testing.T) {
			doc, err := decodeJSONValue([]byte(tt.msg))
			require.NoError(t, err)
			err = proto.check(tt.schema, doc)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("valid message refused: %v", err)
			case tt.want != "" && err == nil:
				t.Fatal("invalid message accepted")
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("error %q lacks %q", err, tt.want)
			}
		})
	}
}

func BenchmarkExternalReadValid(b *testing.B) {
	dir := b.TempDir()
	p := NewExternal(ExternalOptions{})
	spec, err := p.Canonicalize(model.Spec{
		"program": filepath.Join(extBin, "jsonfile"),
		"config":  map[string]any{"dir": dir, "name": "bench", "content": map[string]any{"a": 1}},
	})
	require.NoError(b, err)
	_, err = p.Apply(context.Background(), Env{Name: "bench"}, spec, State{})
	require.NoError(b, err)
	b.ResetTimer()
	for b.Loop() {
		st, err := p.Read(context.Background(), Env{Name: "bench"}, spec)
		require.NoError(b, err, "%v %v", st, err)
		require.True(b, st.Exists, "%v %v", st, err)
	}
}
