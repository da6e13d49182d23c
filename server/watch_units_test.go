package server

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A systemd manager that cannot be reached is tried again after a wait
// that doubles, and what may have changed meanwhile is reported lost
// before each new attempt; the follower returns when its context ends.
func TestFollowUnitsBacksOffWhileTheManagerIsAway(t *testing.T) {
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	var mu sync.Mutex
	lost := 0
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		followUnitsOf(ctx, "unix:path="+t.TempDir()+"/none", func(string) {}, func() { mu.Lock(); lost++; mu.Unlock() }, log)
	}()
	require.Eventually(t, func() bool { return strings.Count(logs.String(), "watch: systemd units") >= 2 }, time.Minute, 10*time.Millisecond)
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the follower did not return when its context ended")
	}
	out := logs.String()
	assert.Contains(t, out, "retry=1s")
	assert.Contains(t, out, "retry=2s", "the second wait doubles")
	assert.Contains(t, out, "connect to systemd")
	mu.Lock()
	defer mu.Unlock()
	assert.GreaterOrEqual(t, lost, 1, "a new attempt reports what changed meanwhile as lost")
}
