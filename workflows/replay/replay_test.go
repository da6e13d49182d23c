package replay

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/testenv"
)

var (
	record  = flag.Bool("record", false, "write the histories TestRecordHistories records under testdata/<release>/, replacing that release's")
	release = flag.String("release", "", "the release the recorded histories are of (default: the latest tag, git describe --tags --abbrev=0)")
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopTemporal()
	os.Exit(code)
}

// TestReplayRecordedHistories replays the histories recorded from every
// release kept under testdata/ against this build's workflows, registered
// as the worker registers them: a change that would make an execution
// started by one of those releases go another way fails here.
func TestReplayRecordedHistories(t *testing.T) {
	hs := load(t, historiesDir)
	require.NotEmpty(t, hs, "no recorded histories under %s", historiesDir)
	checkHistories(t, hs)
}

// TestRecordHistories runs every scenario on a dev server, each with
// executions of real work, and checks that their histories cover every
// workflow type and branch and replay. With -record it writes them under
// testdata/<release>/ (run it at a release, see docs/operating.md):
//
//	go test ./workflows/replay -run TestRecordHistories -record [-release v0.2.0]
func TestRecordHistories(t *testing.T) {
	r := newRig(t)
	ctx := ctxFor(t, 5*time.Minute)
	var (
		mu  sync.Mutex
		all []history
		wg  sync.WaitGroup
	)
	start := time.Now()
	for _, sc := range scenarios {
		wg.Go(func() {
			ok := t.Run(sc.name, func(t *testing.T) {
				roots := sc.run(t, r)
				hs := collect(ctx, t, r.temporal, sc.name, roots)
				mu.Lock()
				all = append(all, hs...)
				mu.Unlock()
			})
			if !ok {
				t.Errorf("scenario %s failed", sc.name)
			}
		})
	}
	wg.Wait()
	require.False(t, t.Failed(), "a scenario failed")
	t.Logf("%d scenarios, %d histories in %s", len(scenarios), len(all), time.Since(start).Round(time.Millisecond))
	dir := filepath.Join(t.TempDir(), "fresh")
	if *record {
		name := *release
		if name == "" {
			out, err := exec.Command("git", "describe", "--tags", "--abbrev=0").Output()
			require.NoError(t, err, "git describe: name the release with -release")
			name = strings.TrimSpace(string(out))
		}
		dir = filepath.Join(historiesDir, name)
		require.NoError(t, os.RemoveAll(dir))
		// The commit the histories are of (the release's tag, else HEAD),
		// so that internal/upgrade finds its build in a clone without tags.
		commit, err := exec.Command("git", "rev-parse", "--verify", "--quiet", name+"^{commit}").Output()
		if err != nil {
			commit, err = exec.Command("git", "rev-parse", "--verify", "HEAD^{commit}").Output()
			require.NoError(t, err)
		}
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "COMMIT"), commit, 0o644))
	}
	write(t, dir, all)
	checkHistories(t, load(t, filepath.Dir(dir)))
}
