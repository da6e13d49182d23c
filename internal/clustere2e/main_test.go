package clustere2e

import (
	"os"
	"testing"

	"github.com/cairn-io/cairn/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	// A failed run keeps the hosts' logs.
	testenv.StopTemporalCluster(code != 0)
	os.Exit(code)
}
