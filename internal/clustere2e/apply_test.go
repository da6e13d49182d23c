package clustere2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/internal/failover"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
)

// The apply of a package: files, and a chain of commands long enough for
// the four faults with the chain moving between them.
const (
	applyFiles    = 20
	applyCommands = 120
)

func applyDocument(root string) string {
	var b strings.Builder
	for i := range applyFiles {
		fmt.Fprintf(&b, "---\napiVersion: cairn/v1\nkind: File\nmetadata: {name: f%d}\nspec: {path: %s/files/f%d, content: \"file %d\\n\"}\n", i, root, i, i)
	}
	for i := range applyCommands {
		fmt.Fprintf(&b, "---\napiVersion: cairn/v1\nkind: Exec\nmetadata: {name: e%d}\nspec: {command: '%s'}\n", i,
			chainCommand(i, applySleep, "${TMPDIR##*/}", root+"/lines"))
		if i > 0 {
			fmt.Fprintf(&b, "dependsOn: [Exec/e%d]\n", i-1)
		}
	}
	return b.String()
}

// An apply on the production topology survives Temporal's faults: a
// history host killed (and started again), matching restarted, the
// frontend restarted, each in the middle of the chain. The apply
// completes, every command ran once, no step failed or took a second
// attempt, and each stall is measured.
func TestApplySurvivesTemporalFaults(t *testing.T) {
	cluster := testenv.TemporalCluster(t)
	env := failover.Env{Bin: testenv.BuildCairn(t), Temporal: cluster.HostPort,
		Database: testenv.FreshPostgres(t), Queue: "cluster-apply-" + failover.RandomHex(5)}
	dir := t.TempDir()
	root := filepath.Join(dir, "target")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "files"), 0o755))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	srv := failover.StartServer(t, env, dir, "srv")
	stack, err := srv.Client.CreateStack(ctx, model.StackInput{Name: "cluster-" + failover.RandomHex(4)})
	require.NoError(t, err)
	started, err := srv.Client.Apply(ctx, stack.ID, &client.Document{Data: []byte(applyDocument(root)), Format: "yaml"}, client.ApplyOptions{})
	require.NoError(t, err)
	c := chain{cluster: cluster, path: filepath.Join(root, "lines"), total: applyCommands, workflowID: started.WorkflowID}
	stalls := c.injectFaults(ctx, t)

	done, err := srv.Client.Wait(ctx, started.ID, 250*time.Millisecond)
	require.NoError(t, err)
	requireNoStepFailed(t, done, applyCommands)
	require.Equal(t, applyFiles, done.Report.Created)
	require.Equal(t, applyCommands, done.Report.Updated)
	c.requireOnce(t)
	for i := range applyFiles {
		got, err := os.ReadFile(filepath.Join(root, "files", fmt.Sprintf("f%d", i)))
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("file %d\n", i), string(got))
	}
	logStalls(t, "apply", stalls)
}
