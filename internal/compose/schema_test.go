package compose

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/testenv"
)

// The compose job that sets Temporal's schema up works: its command, run
// as the container would run it (its environment, Temporal's SQL tool on
// the PATH) against the test PostgreSQL, creates both databases with
// their schema, and runs again without harm, as it does when compose
// starts anew.
func TestComposeSchemaJobSetsTheSchemaUp(t *testing.T) {
	pg := testenv.PostgresURL(t)
	server, err := testenv.TemporalServerBinary()
	require.NoError(t, err)
	job, err := load(t).GetService("temporal-schema")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(job.Entrypoint), 2, "entrypoint %v", job.Entrypoint)

	u, err := url.Parse(pg)
	require.NoError(t, err)
	pwd, _ := u.User.Password()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "compose_" + hex.EncodeToString(b[:])
	env := []string{"PATH=" + filepath.Dir(server) + ":" + os.Getenv("PATH"),
		"POSTGRES_SEEDS=" + u.Hostname(), "DB_PORT=" + u.Port(), "POSTGRES_USER=" + u.User.Username(),
		"POSTGRES_PWD=" + pwd, "DBNAME=" + name, "VISIBILITY_DBNAME=" + name + "_visibility"}
	admin, err := sql.Open("pgx", pg)
	require.NoError(t, err)
	defer admin.Close()
	t.Cleanup(func() {
		for _, db := range []string{name, name + "_visibility"} {
			_, _ = admin.Exec(`DROP DATABASE IF EXISTS ` + db + ` WITH (FORCE)`)
		}
	})
	for run := range 2 {
		args := append(slices.Clone(job.Entrypoint[1:]), job.Command...)
		cmd := exec.Command(job.Entrypoint[0], args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "run %d of the schema job:\n%s", run+1, out[max(0, len(out)-4000):])
	}
	for db, table := range map[string]string{name: "executions", name + "_visibility": "executions_visibility"} {
		u.Path = "/" + db
		conn, err := sql.Open("pgx", u.String())
		require.NoError(t, err)
		var version string
		require.NoError(t, conn.QueryRow(`SELECT curr_version FROM schema_version`).Scan(&version), db)
		assert.NotEqual(t, "0.0", version, "%s: schema version", db)
		var n int
		assert.NoError(t, conn.QueryRow(`SELECT count(*) FROM `+table).Scan(&n), "%s: table %s", db, table)
		conn.Close()
	}
}
