package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/agentapi"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
	"github.com/cairn-io/cairn/store"
)

// An agent node's list holds the watched files of the stacks placed on
// it, at most MaxNodePaths: a stack that would take the node past them is
// not watched there until room is made. An agent waiting on its current
// version hears of a change at once; a version of another watcher (an
// earlier server process) is answered at once; reports mark the node's
// resources at the paths named, or all of them on overflow.
func TestAgentNodeWatchListIsBoundedAndFollowsTheStore(t *testing.T) {
	dev := testenv.Temporal(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	st, err := store.Open(ctx, store.DefaultURL(t.TempDir()))
	require.NoError(t, err)
	defer st.Close()
	checks := starter.New(dev.Client, starter.Config{TaskQueue: "watch-agent-bounds", Store: st})
	require.NoError(t, checks.EnsureSearchAttributes(ctx))
	require.NoError(t, st.PutCluster(ctx, &model.Cluster{ID: "c1", Name: "c1", Nodes: []model.Node{
		{ID: "a1", Name: "a1", Mode: model.NodeAgent},
	}}))
	stack := func(name string, files int) (string, []string) {
		s := &model.Stack{Name: name}
		require.NoError(t, st.CreateStack(ctx, s))
		var res []model.StackResource
		var paths []string
		for i := range files {
			p := fmt.Sprintf("/%s/f%d", name, i)
			res = append(res, model.StackResource{Kind: "File", PkgName: fmt.Sprintf("f%d", i), ID: p, Node: "a1"})
			paths = append(paths, p)
		}
		_, err := st.WriteStackRecord(ctx, s.ID, "stack-"+s.ID+".r", res, "hash", "c1", true)
		require.NoError(t, err)
		require.NoError(t, st.PutDriftSettings(ctx, s.ID, false, true))
		return s.ID, paths
	}
	small, smallPaths := stack("small", 2)
	large, largePaths := stack("large", 3)

	w := NewWatcher(st, checks, WatchOptions{MaxNodePaths: 4, Resync: time.Hour}, nil)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	defer func() { stop(); <-done }()

	// Listed in id order: whichever comes first takes its room.
	first, firstPaths, second, secondPaths := small, smallPaths, large, largePaths
	if large < small {
		first, firstPaths, second, secondPaths = large, largePaths, small, smallPaths
	}
	var l *agentapi.WatchList
	require.Eventually(t, func() bool {
		l, err = w.NodeWatchList(ctx, "c1", "a1", "")
		return err == nil && fmt.Sprint(l.Paths) == fmt.Sprint(firstPaths)
	}, time.Minute, 10*time.Millisecond, "one stack listed, the other past the node's bound")

	t.Run("reports mark the node's resources", func(t *testing.T) {
		assert.Equal(t, 1, w.NodeWatchEvents("c1", "a1", agentapi.WatchEvents{Paths: firstPaths[:1]}))
		assert.Equal(t, 0, w.NodeWatchEvents("c1", "a1", agentapi.WatchEvents{Paths: secondPaths[:1]}), "a stack not watched on the node")
		assert.Equal(t, 0, w.NodeWatchEvents("c1", "a1", agentapi.WatchEvents{Paths: []string{"/etc/passwd"}}))
		assert.Equal(t, len(firstPaths), w.NodeWatchEvents("c1", "a1", agentapi.WatchEvents{Overflow: true}))
		assert.Equal(t, 0, w.NodeWatchEvents("c1", "a2", agentapi.WatchEvents{Overflow: true}), "another node")
	})

	t.Run("a waiting agent hears of a change at once", func(t *testing.T) {
		type answer struct {
			l   *agentapi.WatchList
			err error
			at  time.Time
		}
		got := make(chan answer, 1)
		go func() {
			l, err := w.NodeWatchList(ctx, "c1", "a1", l.Version)
			got <- answer{l, err, time.Now()}
		}()
		t0 := time.Now()
		require.NoError(t, st.PutDriftSettings(ctx, first, false, false))
		w.Changed(first)
		w.Changed(second)
		a := <-got
		require.NoError(t, a.err)
		assert.Less(t, a.at.Sub(t0), agentapi.WatchWait, "the answer waited for its bound, not for the change")
		assert.NotEqual(t, l.Version, a.l.Version)
		// The first stack's paths went (and woke the agent); the second's
		// come with the next version.
		require.Eventually(t, func() bool {
			l, err = w.NodeWatchList(ctx, "c1", "a1", "")
			return err == nil && fmt.Sprint(l.Paths) == fmt.Sprint(secondPaths)
		}, time.Minute, 10*time.Millisecond, "the setting turned off makes room for the other stack")
	})

	t.Run("a version of another server process is answered at once", func(t *testing.T) {
		other := NewWatcher(st, checks, WatchOptions{}, nil)
		t0 := time.Now()
		got, err := other.NodeWatchList(ctx, "c1", "a1", l.Version)
		require.NoError(t, err)
		assert.NotEqual(t, l.Version, got.Version)
		assert.Less(t, time.Since(t0), agentapi.WatchWait)
	})
}

// A node's requests waiting for its list to change are bounded: past
// maxWatchWaiters, a request is answered at once with the current list.
func TestAgentNodeWatchWaitersAreBounded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := NewWatcher(nil, nil, WatchOptions{}, nil)
	l, err := w.NodeWatchList(ctx, "c1", "a1", "")
	require.NoError(t, err)
	answered := make(chan struct{}, maxWatchWaiters)
	for range maxWatchWaiters {
		go func() {
			_, _ = w.NodeWatchList(ctx, "c1", "a1", l.Version)
			answered <- struct{}{}
		}()
	}
	require.Eventually(t, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.agents[nodeRef{cluster: "c1", node: "a1"}].waiting == maxWatchWaiters
	}, time.Minute, time.Millisecond)
	got, err := w.NodeWatchList(ctx, "c1", "a1", l.Version)
	require.NoError(t, err, "one more is answered at once")
	assert.Equal(t, l.Version, got.Version)
	assert.Len(t, answered, 0, "the waiting ones still wait")
	cancel()
	for range maxWatchWaiters {
		<-answered
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	assert.Zero(t, w.agents[nodeRef{cluster: "c1", node: "a1"}].waiting)
}
