package partition

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/agentapi"
	"github.com/cairn-io/cairn/model"
)

// The test binary runs itself as an agent API writer inside a host's
// namespace when writerEnv is set (see runWriter).
const writerEnv = "CAIRN_PARTITION_WRITER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(writerEnv); mode != "" {
		os.Exit(runWriter(mode, os.Getenv("CAIRN_SERVER")))
	}
	os.Exit(m.Run())
}

// runWriter is an agent's client of the agent API at url: "fenced" as
// `cairn agent` builds it, "plain" over Go's default transport. It reads
// its node once (so a connection is open), says "warm", and on "put" from
// stdin writes a record, giving up after two seconds, as an attempt
// fenced off gives up its writes; it says how that went and waits for
// stdin to close.
func runWriter(mode, url string) int {
	token, err := agentapi.NewToken("c", "n")
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	var hc *http.Client
	if mode == "plain" {
		hc = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	c, err := agentapi.NewClient(url, token, hc)
	if err == nil {
		_, err = c.Node(context.Background())
	}
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("warm")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if in.Text() != "put" {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := c.PutStepData(ctx, "exec-1", "step-"+mode, "outputs", []byte(strings.Repeat("x", 1000)))
		cancel()
		fmt.Println("gave up:", err != nil)
	}
	return 0
}

// A write the agent gave up on while cut off from the server is never
// delivered when the partition heals: the agent's connections are reset,
// not closed, so the kernel drops what it still held of the request. Over
// Go's default transport (the control) the kernel goes on retransmitting
// the request, and the server receives it whole after the heal: a stale
// owner's record landing after a newer attempt may have made its own.
func TestGivenUpWriteNeverLandsAfterTheHeal(t *testing.T) {
	t.Parallel()
	n := newNetwork(t)
	// The server: it answers the node, and notes each write it read whole.
	var mu sync.Mutex
	landed := map[string]time.Time{}
	ln, err := net.Listen("tcp", n.Addr+":0")
	require.NoError(t, err)
	srv := &http.Server{ReadHeaderTimeout: time.Minute, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			_ = json.NewEncoder(w).Encode(agentapi.NodeInfo{Cluster: "c", Node: model.Node{ID: "n"}})
			return
		}
		var body map[string][]byte
		if json.NewDecoder(r.Body).Decode(&body) == nil {
			mu.Lock()
			for k := range body {
				landed[k] = time.Now()
			}
			mu.Unlock()
		}
		w.WriteHeader(http.StatusNoContent)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	url := "http://" + ln.Addr().String()

	for _, tc := range []struct {
		mode      string
		wantLands bool
	}{
		{mode: "fenced"},
		{mode: "plain", wantLands: true},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			h := n.addHost(t, tc.mode)
			self, err := os.Executable()
			require.NoError(t, err)
			cmd := h.command(self, "-test.run=^$")
			cmd.Env = append(os.Environ(), writerEnv+"="+tc.mode, "CAIRN_SERVER="+url)
			stdin, err := cmd.StdinPipe()
			require.NoError(t, err)
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			cmd.Stderr = os.Stderr
			require.NoError(t, cmd.Start())
			t.Cleanup(func() {
				_ = stdin.Close()
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			})
			out := bufio.NewScanner(stdout)
			require.True(t, out.Scan(), "the writer said nothing")
			require.Equal(t, "warm", out.Text())

			h.cut()
			_, err = io.WriteString(stdin, "put\n")
			require.NoError(t, err)
			require.True(t, out.Scan(), "the writer said nothing")
			require.Equal(t, "gave up: true", out.Text(), "the write went through a cut link")
			mu.Lock()
			_, early := landed["step-"+tc.mode]
			mu.Unlock()
			require.False(t, early, "the write landed through a cut link")
			healAt := time.Now()
			h.heal()

			deadline := time.Now().Add(20 * time.Second)
			var at time.Time
			for time.Now().Before(deadline) && at.IsZero() {
				time.Sleep(100 * time.Millisecond)
				mu.Lock()
				at = landed["step-"+tc.mode]
				mu.Unlock()
			}
			if tc.wantLands {
				require.False(t, at.IsZero(), "the control's write never landed: the test shows nothing")
				t.Logf("over Go's default transport the given-up write landed %s after the heal", at.Sub(healAt).Round(10*time.Millisecond))
				return
			}
			assert.True(t, at.IsZero(), "the given-up write landed %s after the heal", at.Sub(healAt))
		})
	}
}
