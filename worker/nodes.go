package worker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/cairn-io/cairn/providers"
	"github.com/cairn-io/cairn/workflows"
)

// LocalNodes serves every cluster's local nodes from this process: one node
// worker per node, each applying inside its own directory
// <dataDir>/nodes/<cluster>/<node>/. Sync follows the store, so nodes added
// to a cluster are served and removed ones are stopped.
type LocalNodes struct {
	c       client.Client
	d       Deps
	o       Options
	dataDir string

	// syncMu makes Syncs one at a time: each reads the clusters and
	// reconciles the workers under it, so a Sync that read the store
	// earlier never undoes one that read it later.
	syncMu sync.Mutex

	mu      sync.Mutex
	running map[string]sdkworker.Worker                 // task queue → worker
	builds  map[string]func() (sdkworker.Worker, error) // task queue → how to build its worker
	boots   map[string]int                              // task queue → times its worker started
}

// NewLocalNodes returns the local nodes' server; call Sync or Run.
func NewLocalNodes(c client.Client, d Deps, dataDir string, o Options) *LocalNodes {
	return &LocalNodes{c: c, d: d, o: o, dataDir: dataDir, running: map[string]sdkworker.Worker{},
		builds: map[string]func() (sdkworker.Worker, error){}, boots: map[string]int{}}
}

// NodeRoot is the directory a local node applies in.
func (l *LocalNodes) NodeRoot(cluster, node string) string {
	return filepath.Join(l.dataDir, "nodes", cluster, node)
}

// Sync starts a worker for each local node not yet served and stops those
// of nodes that are gone or no longer local. Syncs run one at a time (a
// periodic one and one after a cluster was created, say): one that read
// the clusters before another stopped nothing the other started.
func (l *LocalNodes) Sync(ctx context.Context) error {
	if l.d.Store == nil {
		return errors.New("local nodes: a store is required")
	}
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	clusters, err := l.d.Store.ListClusters(ctx)
	if err != nil {
		return fmt.Errorf("local nodes: %w", err)
	}
	want := map[string]func() (sdkworker.Worker, error){}
	var errs []error
	for _, c := range clusters {
		for _, n := range c.Nodes {
			if !isLocal(n) {
				continue
			}
			// Ids become directory names: only single clean names.
			if !cleanName(c.ID) || !cleanName(n.ID) {
				errs = append(errs, fmt.Errorf("local node %q of cluster %q: ids must be plain names to serve as directories", n.ID, c.ID))
				continue
			}
			root := l.NodeRoot(c.ID, n.ID)
			clusterID, queue := c.ID, workflows.NodeTaskQueue(c.ID, n.ID)
			want[queue] = func() (sdkworker.Worker, error) {
				if err := os.MkdirAll(root, 0o755); err != nil {
					return nil, err
				}
				// A reboot of a local node restarts its worker.
				host := providers.NewHost(func() { go l.restart(queue) })
				return NewNodeWorker(l.c, l.d, clusterID, providers.Node{Name: n.ID, Root: root, Host: host}, l.o)
			}
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for queue, w := range l.running {
		if _, ok := want[queue]; !ok {
			w.Stop()
			delete(l.running, queue)
		}
	}
	for queue, build := range want {
		if _, ok := l.running[queue]; ok {
			continue
		}
		w, err := build()
		if err == nil {
			err = w.Start()
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("local node queue %s: %w", queue, err))
			continue
		}
		l.running[queue] = w
		l.builds[queue] = build
		l.boots[queue]++
	}
	return errors.Join(errs...)
}

// restart is the simulated reboot of a local node: its worker stops (the
// steps in flight drain, then are handed back) and a new one, with a new
// boot id, takes the queue.
func (l *LocalNodes) restart(queue string) {
	l.mu.Lock()
	w, build := l.running[queue], l.builds[queue]
	l.mu.Unlock()
	if w == nil || build == nil {
		return
	}
	w.Stop()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running[queue] != w {
		return // stopped or replaced meanwhile
	}
	delete(l.running, queue)
	nw, err := build()
	if err == nil {
		err = nw.Start()
	}
	if err != nil {
		l.d.withDefaults().Logger.Error("restarting local node", "queue", queue, "error", err)
		return
	}
	l.running[queue] = nw
	l.boots[queue]++
}

// Serving reports whether a worker serves the task queue now.
func (l *LocalNodes) Serving(queue string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running[queue] != nil
}

// Boots reports how many times the worker of a queue has started: a
// local node's simulated reboot adds one.
func (l *LocalNodes) Boots(queue string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.boots[queue]
}

// Run syncs now and then every interval until ctx ends, then stops every
// node worker. Sync errors are logged and retried at the next interval.
func (l *LocalNodes) Run(ctx context.Context, interval time.Duration) error {
	defer l.Stop()
	log := l.d.withDefaults().Logger
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := l.Sync(ctx); err != nil {
			log.Error("serving local nodes", "error", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Stop stops every node worker, all at once: each drains its steps in
// flight within the same bound (Options.Drain).
func (l *LocalNodes) Stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	var wg sync.WaitGroup
	for queue, w := range l.running {
		wg.Go(w.Stop)
		delete(l.running, queue)
	}
	wg.Wait()
}

func cleanName(s string) bool {
	return s != "" && s != "." && s != ".." && filepath.Base(s) == s && filepath.Clean(s) == s
}
