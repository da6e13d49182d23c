// Command cairn-bench measures Cairn end to end on a Temporal dev server:
// it applies N generated file resources to a stack (create), applies them
// again (noop) and plans them (dry-run), and prints wall time, resources
// per second, history events per execution (children included) and peak
// memory. A bare loop of batch activities writing the same files gives the
// floor Cairn's overhead is measured against.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"

	"github.com/cairn-io/cairn/activities"
	"github.com/cairn-io/cairn/graphs"
	"github.com/cairn-io/cairn/internal/searchattr"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/starter"
	"github.com/cairn-io/cairn/store"
	"github.com/cairn-io/cairn/worker"
)

// lastHistoryBytes is the largest history (bytes) historyEvents saw last.
var lastHistoryBytes int

// Flags read by run.
var (
	verbose         bool
	stepConcurrency int
	workDir         string
)

func main() {
	sizes := flag.String("n", "100,1000,10000,100000", "comma-separated resource counts")
	parallelism := flag.Int("parallelism", 20, "units in flight per execution")
	batch := flag.Int("batch", 100, "steps per batch unit")
	baseline := flag.Int("baseline", 10000, "files the bare activity loop writes (0 = skip)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.BoolVar(&verbose, "v", false, "break each execution down by activity type")
	flag.IntVar(&stepConcurrency, "step-concurrency", 0, "steps of one batch converging at once (0 = default)")
	flag.StringVar(&workDir, "dir", "", "where the generated files go (default: a temporary directory)")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cairn-bench:", err)
			os.Exit(1)
		}
		_ = pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if err := run(*sizes, *parallelism, *batch, *baseline); err != nil {
		fmt.Fprintln(os.Stderr, "cairn-bench:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run(sizes string, parallelism, batch, baseline int) error {
	var ns []int
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Errorf("-n: bad count %q", s)
		}
		ns = append(ns, n)
	}
	ctx := context.Background()
	tmp, err := os.MkdirTemp(workDir, "cairn-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	bin := os.Getenv("CAIRN_TEMPORAL_BIN")
	if bin == "" {
		bin = "bin/temporal"
	}
	fmt.Printf("starting Temporal dev server (%s)…\n", bin)
	quiet := slog.New(slog.DiscardHandler)
	srv, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
		ExistingPath: bin, LogLevel: "error", ExtraArgs: searchattr.DevServerArgs(),
		Stdout: io.Discard, Stderr: io.Discard,
		ClientOptions: &client.Options{Logger: log.NewStructuredLogger(quiet)},
	})
	if err != nil {
		return fmt.Errorf("start dev server: %w", err)
	}
	defer func() { _ = srv.Stop() }()
	c := srv.Client()

	st, err := store.Open(ctx, "sqlite://"+filepath.Join(tmp, "cairn.db"))
	if err != nil {
		return err
	}
	defer st.Close()
	const queue = "cairn-bench"
	logger := quiet
	if os.Getenv("CAIRN_BENCH_LOG") != "" {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	w, err := worker.New(c, worker.Deps{Store: st, Logger: logger}, worker.Options{TaskQueue: queue, StepConcurrency: stepConcurrency})
	if err != nil {
		return err
	}
	w.RegisterWorkflowWithOptions(bareLoop, workflow.RegisterOptions{Name: "BareLoop"})
	w.RegisterActivityWithOptions(writeFiles, activity.RegisterOptions{Name: "BareWriteFiles"})
	if err := w.Start(); err != nil {
		return err
	}
	defer w.Stop()
	s := starter.New(c, starter.Config{TaskQueue: queue, Store: st, Parallelism: parallelism, BatchSize: batch})

	fmt.Printf("parallelism %d, batch %d, %d CPUs\n\n", parallelism, batch, runtime.NumCPU())
	fmt.Printf("%-8s %-8s %10s %12s %9s %9s %10s %10s\n", "N", "phase", "wall", "res/s", "events", "max/wf", "workflows", "max KiB/wf")
	for _, n := range ns {
		if err := benchSize(ctx, c, st, s, tmp, n); err != nil {
			return fmt.Errorf("N=%d: %w", n, err)
		}
	}
	if baseline > 0 {
		dir := filepath.Join(tmp, "bare")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		start := time.Now()
		we, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue}, bareLoop, bareInput{Dir: dir, Files: baseline, Batch: 100, InFlight: 20})
		if err != nil {
			return err
		}
		if err := we.Get(ctx, nil); err != nil {
			return err
		}
		wall := time.Since(start)
		events, _, _, err := historyEvents(ctx, c, we.GetID(), we.GetRunID())
		if err != nil {
			return err
		}
		fmt.Printf("%-8d %-8s %10s %12.0f %9d %9d %10d %10d\n", baseline, "bare", wall.Round(time.Millisecond), float64(baseline)/wall.Seconds(), events, events, 1, lastHistoryBytes>>10)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Printf("\npeak memory of this process (worker, store, starter): maxrss %d MiB, Go heap peak-ish %d MiB (HeapSys)\n",
		ru.Maxrss/1024, ms.HeapSys>>20)
	return nil
}

func benchSize(ctx context.Context, c client.Client, st store.Store, s *starter.Starter, tmp string, n int) error {
	dir := filepath.Join(tmp, fmt.Sprintf("n%d", n))
	// As the API does: validate the package, then keep it parsed in the
	// snapshot so that Prepare does not parse it again.
	sources := generate(dir, n)
	parseStart := time.Now()
	docs, err := graphs.Parse(graphs.Options{MaxBytes: 1 << 30, MaxTotalBytes: 4 << 30, MaxNodes: 1 << 30}, graphSources(sources)...)
	if err != nil {
		return err
	}
	content, err := activities.EncodeParsedPackageSnapshot(docs, sources...)
	if err != nil {
		return err
	}
	if verbose {
		fmt.Printf("%-8d %-8s %10s   (validate and encode the snapshot, as the API does; not in the phases below)\n", n, "submit", time.Since(parseStart).Round(time.Millisecond))
	}
	hash, err := st.PutSnapshot(ctx, "package", content)
	if err != nil {
		return err
	}
	stack := &model.Stack{Name: fmt.Sprintf("bench-%d", n), URLs: []string{}}
	if err := st.CreateStack(ctx, stack); err != nil {
		return err
	}
	phases := []struct {
		name string
		run  func() (*starter.Execution, error)
		want func(*starter.Execution) error
	}{
		{"create", func() (*starter.Execution, error) {
			return s.StartApply(ctx, starter.StackRun{StackID: stack.ID, SnapshotHash: hash})
		}, func(e *starter.Execution) error {
			if e.Report == nil || e.Report.Created != n+1 {
				return fmt.Errorf("report %+v", e.Report)
			}
			return nil
		}},
		{"noop", func() (*starter.Execution, error) {
			return s.StartApply(ctx, starter.StackRun{StackID: stack.ID, SnapshotHash: hash})
		}, func(e *starter.Execution) error {
			if e.Report == nil || e.Report.Unchanged != n+1 {
				return fmt.Errorf("report %+v", e.Report)
			}
			return nil
		}},
		{"dry-run", func() (*starter.Execution, error) {
			return s.StartDryRun(ctx, starter.StackRun{StackID: stack.ID, SnapshotHash: hash})
		}, func(e *starter.Execution) error {
			if e.DryRun == nil || e.DryRun.Summary.Noop != n+1 {
				return fmt.Errorf("plan %+v", e.DryRun)
			}
			return nil
		}},
	}
	for _, ph := range phases {
		start := time.Now()
		e, err := ph.run()
		if err != nil {
			return fmt.Errorf("%s: %w", ph.name, err)
		}
		if err := c.GetWorkflow(ctx, e.WorkflowID, e.RunID).Get(ctx, nil); err != nil {
			return fmt.Errorf("%s: %w", ph.name, err)
		}
		wall := time.Since(start)
		done, err := s.Describe(ctx, e.ID)
		if err != nil {
			return err
		}
		if err := ph.want(done); err != nil {
			return fmt.Errorf("%s: %w", ph.name, err)
		}
		events, maxEvents, workflows, err := historyEvents(ctx, c, e.WorkflowID, e.RunID)
		if err != nil {
			return err
		}
		fmt.Printf("%-8d %-8s %10s %12.0f %9d %9d %10d %10d\n", n, ph.name, wall.Round(time.Millisecond), float64(n)/wall.Seconds(), events, maxEvents, workflows, lastHistoryBytes>>10)
		if verbose {
			if err := breakdown(ctx, c, e.WorkflowID, e.RunID); err != nil {
				return err
			}
		}
	}
	return nil
}

// generate is a package of one directory and n files in it, as JSON
// documents of at most 10,000 resources each.
func graphSources(in []activities.SnapshotSource) []graphs.Source {
	out := make([]graphs.Source, len(in))
	for i, s := range in {
		out[i] = graphs.Source{Name: s.Name, Data: []byte(s.Data), Format: graphs.Format(s.Format)}
	}
	return out
}

func generate(dir string, n int) []activities.SnapshotSource {
	const perDoc = 10000
	var out []activities.SnapshotSource
	var b strings.Builder
	b.WriteString("[\n")
	fmt.Fprintf(&b, `{"apiVersion":"cairn/v1","kind":"Directory","metadata":{"name":"root"},"spec":{"path":%q}}`, dir)
	sep := ",\n"
	for i := range n {
		fmt.Fprintf(&b, sep+`{"apiVersion":"cairn/v1","kind":"File","metadata":{"name":"f%06d"},"spec":{"path":%q,"content":"file %d\n","mode":"0644"}}`,
			i, filepath.Join(dir, fmt.Sprintf("f%06d", i)), i)
		sep = ",\n"
		if (i+1)%perDoc == 0 || i == n-1 {
			b.WriteString("\n]\n")
			out = append(out, activities.SnapshotSource{Name: fmt.Sprintf("bench-%d.json", len(out)), Format: "json", Data: b.String()})
			b.Reset()
			b.WriteString("[\n")
			sep = ""
		}
	}
	return out
}

// breakdown prints, per activity type, how many ran, their total run time
// and the time from first schedule to last completion.
func breakdown(ctx context.Context, c client.Client, wfID, runID string) error {
	type stat struct {
		n           int
		run, wait   time.Duration
		first, last time.Time
	}
	stats := map[string]*stat{}
	scheduled := map[int64]string{}
	schedAt := map[int64]time.Time{}
	startedAt := map[int64]time.Time{}
	it := c.GetWorkflowHistory(ctx, wfID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return err
		}
		at := ev.GetEventTime().AsTime()
		switch {
		case ev.GetActivityTaskScheduledEventAttributes() != nil:
			name := ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
			scheduled[ev.GetEventId()] = name
			schedAt[ev.GetEventId()] = at
			st := stats[name]
			if st == nil {
				st = &stat{first: at}
				stats[name] = st
			}
		case ev.GetActivityTaskStartedEventAttributes() != nil:
			id := ev.GetActivityTaskStartedEventAttributes().GetScheduledEventId()
			startedAt[id] = at
			stats[scheduled[id]].wait += at.Sub(schedAt[id])
		case ev.GetActivityTaskCompletedEventAttributes() != nil:
			id := ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()
			st := stats[scheduled[id]]
			st.n++
			st.run += at.Sub(startedAt[id])
			st.last = at
		}
	}
	for name, st := range stats {
		fmt.Printf("           %-18s n=%-5d run %-10s (avg %-8s) queue wait avg %-8s span %s\n", name, st.n,
			st.run.Round(time.Millisecond), (st.run / time.Duration(max(st.n, 1))).Round(time.Millisecond),
			(st.wait / time.Duration(max(st.n, 1))).Round(time.Millisecond), st.last.Sub(st.first).Round(time.Millisecond))
	}
	return nil
}

// historyEvents counts the events of a run and of its child workflows.
func historyEvents(ctx context.Context, c client.Client, wfID, runID string) (total, maxPer, workflows int, err error) {
	maxBytes := 0
	defer func() { lastHistoryBytes = maxBytes }()
	queue := [][2]string{{wfID, runID}}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		it := c.GetWorkflowHistory(ctx, cur[0], cur[1], false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		count, size := 0, 0
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				return 0, 0, 0, err
			}
			count++
			size += proto.Size(ev)
			if a := ev.GetChildWorkflowExecutionStartedEventAttributes(); a != nil {
				queue = append(queue, [2]string{a.GetWorkflowExecution().GetWorkflowId(), a.GetWorkflowExecution().GetRunId()})
			}
		}
		total += count
		maxPer = max(maxPer, count)
		maxBytes = max(maxBytes, size)
		workflows++
	}
	return total, maxPer, workflows, nil
}

// bareInput drives the floor measurement: plain batch activities writing
// files, InFlight at once, nothing else.
type bareInput struct {
	Dir      string
	Files    int
	Batch    int
	InFlight int
}

func bareLoop(ctx workflow.Context, in bareInput) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	var pending []workflow.Future
	for first := 0; first < in.Files; first += in.Batch {
		if len(pending) >= in.InFlight {
			if err := pending[0].Get(ctx, nil); err != nil {
				return err
			}
			pending = pending[1:]
		}
		pending = append(pending, workflow.ExecuteActivity(ctx, "BareWriteFiles", in.Dir, first, min(first+in.Batch, in.Files)))
	}
	for _, f := range pending {
		if err := f.Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

func writeFiles(ctx context.Context, dir string, from, to int) error {
	for i := from; i < to; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%06d", i)), []byte(fmt.Sprintf("file %d\n", i)), 0o644); err != nil {
			return err
		}
	}
	return nil
}
