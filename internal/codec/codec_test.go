package codec_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/cairn-io/cairn/internal/codec"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/prepare"
	"github.com/cairn-io/cairn/starter"
	"github.com/cairn-io/cairn/store"
	"github.com/cairn-io/cairn/worker"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopTemporal()
	os.Exit(code)
}

func newKey(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, codec.KeySize)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

func TestParseKey(t *testing.T) {
	key := bytes.Repeat([]byte{0xab}, 32)
	tests := []struct {
		name    string
		in      string
		wantErr string
	}{
		{"hex", hex.EncodeToString(key), ""},
		{"base64", base64.StdEncoding.EncodeToString(key), ""},
		{"base64 url raw", base64.RawURLEncoding.EncodeToString(key), ""},
		{"surrounding space", " " + hex.EncodeToString(key) + "\n", ""},
		{"empty", "", "empty"},
		{"short", base64.StdEncoding.EncodeToString(key[:16]), "16 bytes, want 32"},
		{"garbage", "not a key!", "neither"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := codec.ParseKey(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !bytes.Equal(got, key) {
				t.Fatalf("ParseKey = %x, %v", got, err)
			}
		})
	}
}

func TestEncodeDecode(t *testing.T) {
	c, err := codec.New(newKey(t))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := converter.GetDefaultDataConverter().ToPayloads("top secret value", map[string]int{"n": 1})
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := c.Encode(plain.Payloads)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range sealed {
		raw, _ := proto.Marshal(p)
		if bytes.Contains(raw, []byte("top secret")) || string(p.Metadata[converter.MetadataEncoding]) != codec.Encoding {
			t.Fatalf("payload not sealed: %s", raw)
		}
	}
	opened, err := c.Decode(sealed)
	if err != nil {
		t.Fatal(err)
	}
	for i := range opened {
		if !proto.Equal(opened[i], plain.Payloads[i]) {
			t.Fatalf("round trip changed payload %d", i)
		}
	}
	// Unsealed payloads are refused: only holders of the key write what
	// the workers read.
	_, err = c.Decode(plain.Payloads)
	require.ErrorIs(t, err, codec.ErrUnsealed)
	// Another key, or a flipped bit, does not open.
	other, _ := codec.New(newKey(t))
	if _, err := other.Decode(sealed); err == nil || !strings.Contains(err.Error(), "sealed with key") {
		t.Fatalf("other key: %v", err)
	}
	tampered := proto.Clone(sealed[0]).(*commonpb.Payload)
	tampered.Data[len(tampered.Data)-1] ^= 1
	if _, err := c.Decode([]*commonpb.Payload{tampered}); err == nil || !strings.Contains(err.Error(), "does not open") {
		t.Fatalf("tampered: %v", err)
	}
}

func TestHTTPHandlerDecodesForTheUI(t *testing.T) {
	key := newKey(t)
	h, err := codec.Handler(key, codec.HandlerOptions{AllowOrigin: "http://localhost:8233"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	c, _ := codec.New(key)
	plain, _ := converter.GetDefaultDataConverter().ToPayloads("shown in the UI")
	sealed, _ := c.Encode(plain.Payloads)
	body, err := json.Marshal(map[string]any{"payloads": sealed})
	if err != nil {
		t.Fatal(err)
	}
	// protojson is what the UI speaks; the SDK's handler accepts it.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/decode", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Payloads []struct {
			Data string `json:"data"`
		} `json:"payloads"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&out) != nil || len(out.Payloads) != 1 {
		t.Fatalf("decode answered %d", resp.StatusCode)
	}
	data, _ := base64.StdEncoding.DecodeString(out.Payloads[0].Data)
	if !strings.Contains(string(data), "shown in the UI") {
		t.Fatalf("decoded data %q", data)
	}
	if resp.Header.Get("Access-Control-Allow-Origin") != "http://localhost:8233" {
		t.Fatal("no CORS header for the UI")
	}
	// The UI shows unsealed payloads (Temporal's own, older ones) as they are.
	plainBody, err := json.Marshal(map[string]any{"payloads": plain.Payloads})
	require.NoError(t, err)
	plainResp, err := http.Post(srv.URL+"/decode", "application/json", bytes.NewReader(plainBody))
	require.NoError(t, err)
	defer plainResp.Body.Close()
	require.Equal(t, http.StatusOK, plainResp.StatusCode)
	var plainOut struct {
		Payloads []struct {
			Data string `json:"data"`
		} `json:"payloads"`
	}
	require.NoError(t, json.NewDecoder(plainResp.Body).Decode(&plainOut))
	require.Len(t, plainOut.Payloads, 1)
	shown, _ := base64.StdEncoding.DecodeString(plainOut.Payloads[0].Data)
	require.Contains(t, string(shown), "shown in the UI")
	pre, _ := http.NewRequest(http.MethodOptions, srv.URL+"/decode", nil)
	if r, err := http.DefaultClient.Do(pre); err != nil || r.StatusCode != http.StatusNoContent {
		t.Fatalf("preflight: %v %v", r, err)
	}
}

// TestNothingReadableReachesTheServer applies a package whose resource
// name and content hold a marker, with and without the codec, and searches
// the raw bytes of the workflow histories the server keeps for it.
func TestNothingReadableReachesTheServer(t *testing.T) {
	dev := testenv.Temporal(t)
	tests := []struct {
		name      string
		seal      bool
		wantFound bool
	}{
		{"without codec the marker is in history", false, true},
		{"with codec it is not", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			marker := fmt.Sprintf("marker%x", newKey(t)[:6])
			c := dev.Client
			if tt.seal {
				dc, err := codec.DataConverter(newKey(t))
				if err != nil {
					t.Fatal(err)
				}
				c, err = client.NewClientFromExisting(dev.Client, client.Options{DataConverter: dc})
				if err != nil {
					t.Fatal(err)
				}
			}
			ctx := context.Background()
			dir := t.TempDir()
			st, err := store.Open(ctx, "sqlite://"+filepath.Join(dir, "cairn.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			queue := fmt.Sprintf("codec-%x", newKey(t)[:6])
			w, err := worker.New(c, worker.Deps{Store: st}, worker.Options{TaskQueue: queue})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Start(); err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			s := starter.New(c, starter.Config{TaskQueue: queue, Store: st})
			stack := &model.Stack{Name: "codec", URLs: []string{}}
			if err := st.CreateStack(ctx, stack); err != nil {
				t.Fatal(err)
			}
			docs := fmt.Sprintf(`apiVersion: cairn/v1
kind: File
metadata: {name: %[1]s}
spec: {path: %[2]s/%[1]s, content: "%[1]s"}
---
apiVersion: cairn/v1
kind: Exec
metadata: {name: echo-%[1]s}
spec: {command: "echo %[1]s"}
dependsOn: [File/%[1]s]
`, marker, dir)
			content, _ := prepare.EncodePackageSnapshot(prepare.SnapshotSource{Name: "p.yaml", Format: "yaml", Data: docs})
			hash, err := st.PutSnapshot(ctx, "package", content)
			if err != nil {
				t.Fatal(err)
			}
			runCtx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			e, err := s.StartApply(runCtx, starter.StackRun{StackID: stack.ID, SnapshotHash: hash})
			if err != nil {
				t.Fatal(err)
			}
			done, err := s.Await(runCtx, e.ID)
			if err != nil {
				t.Fatal(err)
			}
			if done.Status != model.ExecCompleted || done.Report == nil || done.Report.Created != 1 {
				t.Fatalf("apply: %+v (%s)", done.Report, done.Error)
			}
			// The run works end to end through the codec: steps are named.
			if len(done.Steps) != 2 || !strings.Contains(done.Steps[0].ID, marker) {
				t.Fatalf("steps %+v", done.Steps)
			}
			found := historyContains(t, dev.Client, e.WorkflowID, e.RunID, marker)
			if found != tt.wantFound {
				t.Fatalf("marker found in history = %v, want %v", found, tt.wantFound)
			}
		})
	}
}

// historyContains reads the history with a client that has no codec, so
// it sees exactly what the server stores.
func historyContains(t *testing.T, c client.Client, wfID, runID, marker string) bool {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), wfID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	found := false
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := proto.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte(marker)) {
			found = true
			t.Logf("event %d %s holds the marker", ev.GetEventId(), ev.GetEventType())
		}
	}
	return found
}
