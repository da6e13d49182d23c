package fleete2e

import (
	"os"
	"testing"

	"github.com/cairn-io/cairn/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopTemporal()
	os.Exit(code)
}
