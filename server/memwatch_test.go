package server

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWatchMemoryLimitWarns: live memory held above the limit makes the
// collector run against its CPU limiter, and the watch says so.
func TestWatchMemoryLimitWarns(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))

	debug.SetMemoryLimit(math.MaxInt64)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); watchMemoryLimit(ctx, log, 10*time.Millisecond) }()
	<-done // no limit: returns at once
	cancel()

	debug.SetMemoryLimit(32 << 20)
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	done = make(chan struct{})
	go func() { defer close(done); watchMemoryLimit(ctx, log, 10*time.Millisecond) }()
	// About 48 MiB of small objects that point at each other (so each
	// collection has them to mark) against a limit of 32 MiB.
	type node struct {
		next *node
		pad  [2]*int
	}
	var live *node
	for range 2_000_000 {
		live = &node{next: live}
	}
	var sink []*node
	require.Eventually(t, func() bool {
		for range 1000 {
			sink = append(sink[:0], &node{})
		}
		return bytes.Contains([]byte(logs.String()), []byte("memory limit reached"))
	}, 20*time.Second, time.Millisecond, "no warning; logs: %s", logs.String())
	runtime.KeepAlive(sink)
	runtime.KeepAlive(live)
	cancel()
	<-done
	require.Contains(t, logs.String(), "limit_bytes=33554432")
}
