// Command cairn-bench measures Cairn on the path a user takes: it runs
// nothing of Cairn in-process, but starts a Temporal dev server and the real
// `cairn server` binary with their defaults, and talks to the HTTP API
// through the Go client, as the CLI does.
//
// Shapes, each a package or graph a user would write:
//
//	flat        N files, no dependencies
//	groups      a root file and 9 files requiring it, N/10 times
//	chain       each file requires the one before
//	pkger       directories, files in them, exec steps guarded by creates and
//	            unless, labels, buckets and dashboards on a pkger-like REST
//	            platform (served here, on loopback), with dependencies
//	fuel        a Fuel graph of 1,000 shell tasks on 20 local nodes, with
//	            requires chains and cross_depends, uploaded as a release's
//	            graph and executed on a cluster
//	exec-chain  1,000 exec steps on the control plane, each after the one
//	            before
//	fleet       fuel-library's release graph (its 204 tasks read in place,
//	            every command made `true`) on a Fuel-shaped cluster of 8,
//	            100, … local nodes; beside it, the floor (as many `true`
//	            forks, as parallel) and ansible-playbook when on PATH. Run
//	            only when named: -shapes fleet -fleet-nodes 8,100;
//	            -fleet-agents N serves N of the nodes with `cairn agent`
//	            processes
//	agents      idle `cairn agent` processes, 0, 50, 100, … of them
//	            (-agents), polling their nodes' queues while nothing runs:
//	            cairn server's memory, goroutines and TCP connections, and
//	            Temporal's. Run only when named: -shapes agents
//
// Each package is applied to a fresh stack (create), applied again (noop)
// and planned (dry-run); the graph is executed, executed again and
// dry-run. Every phase is checked (files on disk and their contents,
// objects on the platform, the report or plan counts), so a fast failure
// cannot pass for a fast run. Each shape and size gets its own Temporal dev
// server and cairn server; peak RSS is reset before each phase.
//
// When puppet is on PATH, the three file shapes are also applied with
// `puppet apply` (create, again, --noop) from an equivalent manifest. When
// ansible-playbook is on PATH, the fleet shape's steps also run as a
// playbook on as many local hosts (strategy free, forks = hosts).
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type options struct {
	cairnBin, temporalBin string
	sizes                 []int
	large                 bool
	shapes                []string
	fuelTasks, fuelNodes  int
	fleetNodes            []int
	fleetAgents           int
	idleAgents            []int
	fleetLibrary          string
	execChain             int
	puppet                string // path to puppet, "" when not compared
	puppetVersion         string
	puppetMaxN            int
	puppetBudget          time.Duration
	puppetTimeout         time.Duration
	ansibleTimeout        time.Duration
	ansibleOff            bool // -ansible off
	markdown              string
	revision              string
	repeat                int
	load                  string // load average after the run
	timeout, phaseTimeout time.Duration
	dir                   string
	keep                  bool
	verbose               bool
	debugAddr             string
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cairn-bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeoutCause(ctx, o.timeout, fmt.Errorf("the run took longer than -timeout %s", o.timeout))
	defer cancel()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "cairn-bench:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (*options, error) {
	fl := flag.NewFlagSet("cairn-bench", flag.ContinueOnError)
	o := &options{}
	defTemporal := os.Getenv("CAIRN_TEMPORAL_BIN")
	if defTemporal == "" {
		defTemporal = "bin/temporal"
	}
	fl.StringVar(&o.cairnBin, "cairn", "bin/cairn", "the cairn binary to measure (make build builds it)")
	fl.StringVar(&o.temporalBin, "temporal", defTemporal, "the Temporal CLI (the default is $CAIRN_TEMPORAL_BIN when set)")
	sizes := fl.String("n", "1000,10000", "sizes of the flat, groups, chain and pkger shapes (comma-separated)")
	fl.BoolVar(&o.large, "large", false, "also run flat and groups at 100,000 (slow)")
	shapes := fl.String("shapes", strings.Join(allShapes, ","), "shapes to run (comma-separated); fleet runs only when named")
	fl.IntVar(&o.fuelTasks, "fuel-tasks", 1000, "tasks of the Fuel graph")
	fl.IntVar(&o.fuelNodes, "fuel-nodes", 20, "local nodes of the Fuel graph's cluster (one role each)")
	fleetNodes := fl.String("fleet-nodes", "8,100", "local nodes of the fleet shape's clusters (comma-separated sizes)")
	fl.IntVar(&o.fleetAgents, "fleet-agents", 0, "nodes of each fleet served by 'cairn agent' processes, spread evenly (the rest are local nodes of cairn server)")
	idleAgents := fl.String("agents", "0,50,100", "counts of idle agents the agents shape measures (comma-separated, ascending)")
	fl.StringVar(&o.fleetLibrary, "fleet-library", "../shared/testdata/fuel-library", "fuel-library's task files (deployment_*.yaml) the fleet shape reads; never written")
	fl.IntVar(&o.execChain, "exec-chain", 1000, "length of the exec chain")
	puppet := fl.String("puppet", "auto", "compare with puppet apply: auto (when puppet is on PATH) or off")
	fl.IntVar(&o.puppetMaxN, "puppet-max-n", 10000, "largest N compared with Puppet")
	fl.DurationVar(&o.puppetBudget, "puppet-budget", time.Minute, "stop a puppet apply of more than 1,000 files after this (and skip it when the 1,000 figure extrapolates beyond three times this)")
	fl.DurationVar(&o.puppetTimeout, "puppet-timeout", 5*time.Minute, "bound on one puppet apply")
	ansible := fl.String("ansible", "auto", "compare the fleet shape with ansible-playbook: auto (when it is on PATH) or off")
	fl.DurationVar(&o.ansibleTimeout, "ansible-timeout", 5*time.Minute, "bound on one ansible-playbook run of the fleet shape (when ansible-playbook is on PATH)")
	fl.StringVar(&o.markdown, "markdown", "", "also write the results as Markdown to this file")
	fl.StringVar(&o.revision, "revision", "", "what the cairn binary was built from, printed with the results (default: its embedded VCS revision, if any)")
	fl.DurationVar(&o.timeout, "timeout", 3*time.Hour, "bound on the whole run")
	fl.DurationVar(&o.phaseTimeout, "phase-timeout", 30*time.Minute, "bound on one phase (one apply, dry-run or graph execution)")
	fl.StringVar(&o.dir, "dir", "", "parent of the temporary directory holding all state (default: the system's)")
	fl.IntVar(&o.repeat, "repeat", 1, "run each shape and size this many times and report the run of median wall time per phase")
	fl.BoolVar(&o.keep, "keep", false, "keep the temporary directory (logs, databases) instead of removing it")
	fl.BoolVar(&o.verbose, "v", false, "more progress on stderr")
	fl.StringVar(&o.debugAddr, "debug-addr", "", "serve cairn server's runtime profiles on this loopback address (CAIRN_DEBUG_ADDR), to profile it during a run")
	fl.Usage = func() {
		fmt.Fprintf(fl.Output(), "Usage: cairn-bench [flags]\n\nMeasures cairn server end to end through its API (go doc ./cmd/cairn-bench; docs/performance.md).\n\n")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return nil, err
	}
	if fl.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %v", fl.Args())
	}
	for _, s := range strings.Split(*sizes, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(strings.ReplaceAll(s, "_", ""))
		if err != nil || n <= 0 || n%10 != 0 {
			return nil, fmt.Errorf("-n: %q is not a positive multiple of 10", s)
		}
		o.sizes = append(o.sizes, n)
	}
	for _, s := range strings.Split(*fleetNodes, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 3 {
			return nil, fmt.Errorf("-fleet-nodes: %q is not a number of nodes of 3 or more (controllers first)", s)
		}
		o.fleetNodes = append(o.fleetNodes, n)
	}
	for _, s := range strings.Split(*idleAgents, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || (len(o.idleAgents) > 0 && n <= o.idleAgents[len(o.idleAgents)-1]) {
			return nil, fmt.Errorf("-agents: %q is not a count of agents above the one before it", s)
		}
		o.idleAgents = append(o.idleAgents, n)
	}
	for _, n := range o.fleetNodes {
		if o.fleetAgents < 0 || o.fleetAgents > n {
			return nil, fmt.Errorf("-fleet-agents %d: want 0 to %d, the nodes of the smallest fleet", o.fleetAgents, n)
		}
	}
	for _, s := range strings.Split(*shapes, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if !slices.Contains(knownShapes, s) {
			return nil, fmt.Errorf("-shapes: unknown shape %q (want %s)", s, strings.Join(knownShapes, ", "))
		}
		o.shapes = append(o.shapes, s)
	}
	if o.fuelTasks <= 0 || o.fuelNodes <= 0 || o.execChain <= 0 || o.repeat <= 0 {
		return nil, errors.New("-fuel-tasks, -fuel-nodes, -exec-chain and -repeat must be positive")
	}
	for _, p := range []*string{&o.cairnBin, &o.temporalBin} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return nil, err
		}
		if st, err := os.Stat(abs); err != nil || st.IsDir() {
			return nil, fmt.Errorf("%s not found (run `make build`, or pass -cairn / -temporal)", *p)
		}
		*p = abs
	}
	switch *ansible {
	case "auto":
	case "off":
		o.ansibleOff = true
	default:
		return nil, fmt.Errorf("-ansible %q: want auto or off", *ansible)
	}
	switch *puppet {
	case "off":
	case "auto":
		o.puppet, o.puppetVersion = puppetVersion()
	default:
		return nil, fmt.Errorf("-puppet %q: want auto or off", *puppet)
	}
	return o, nil
}

// medianRows picks, per phase, the attempt of median wall time (the
// attempts of one shape and size have the same phases in the same order);
// Puppet's time is its own median.
func medianRows(attempts [][]row) []row {
	if len(attempts) == 0 {
		return nil
	}
	out := make([]row, len(attempts[0]))
	for i := range out {
		var phase, puppet []row
		for _, a := range attempts {
			phase = append(phase, a[i])
			if a[i].Puppet > 0 {
				puppet = append(puppet, a[i])
			}
		}
		slices.SortFunc(phase, func(a, b row) int { return cmp.Compare(a.Wall, b.Wall) })
		out[i] = phase[len(phase)/2]
		if len(puppet) > 0 {
			slices.SortFunc(puppet, func(a, b row) int { return cmp.Compare(a.Puppet, b.Puppet) })
			m := puppet[len(puppet)/2]
			out[i].Puppet, out[i].PuppetOver, out[i].PuppetNote = m.Puppet, m.PuppetOver, ""
		}
	}
	return out
}

// loadAverage is /proc/loadavg's 1, 5 and 15 minute figures.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// loadAvg1 is /proc/loadavg's 1 minute figure.
func loadAvg1() string { return strings.Fields(loadAverage())[0] }

func run(ctx context.Context, o *options) error {
	tmp, err := os.MkdirTemp(o.dir, "cairn-bench-")
	if err != nil {
		return err
	}
	// Nothing is removed before the end of the run: ext4 without a journal
	// does not reuse a deleted inode for one to five minutes, and creating
	// files while it scans past thousands of them costs more than the
	// write (measured here: 1,000 creates took 0.23 s, then 0.58 s right
	// after 50,000 files were removed, 0.31 s a minute later). Each run
	// would pay for the clean-up of the one before.
	if o.keep {
		fmt.Fprintf(os.Stderr, "state kept in %s\n", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	lb, err := startLoopback()
	if err != nil {
		return err
	}
	defer lb.close()
	r := &runner{opts: o, tmp: tmp, loopback: lb, puppet1k: map[string]time.Duration{},
		logf: func(format string, args ...any) {
			fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
		}}
	m := describeMachine(o)
	fmt.Print(m.text())
	if o.repeat > 1 {
		fmt.Printf("each figure: the run of median wall time of %d\n", o.repeat)
	}
	if o.puppet == "" {
		fmt.Println("puppet: not on PATH (or -puppet off); the Puppet columns are skipped")
	}
	fmt.Println()

	type job struct {
		shape string
		n     int
	}
	var jobs []job
	for _, s := range o.shapes {
		switch s {
		case shapeFuel:
			jobs = append(jobs, job{s, o.fuelTasks})
		case shapeExecChain:
			jobs = append(jobs, job{s, o.execChain})
		case shapeFleet:
			for _, n := range o.fleetNodes {
				jobs = append(jobs, job{s, n})
			}
		case shapeAgents:
			jobs = append(jobs, job{s, o.idleAgents[len(o.idleAgents)-1]})
		default:
			for _, n := range o.sizes {
				jobs = append(jobs, job{s, n})
			}
			if o.large && (s == shapeFlat || s == shapeGroups) && !slices.Contains(o.sizes, 100_000) {
				jobs = append(jobs, job{s, 100_000})
			}
		}
	}
	var all []row
	var idle []idleRow
	var failures []string
	started := time.Now()
	for _, j := range jobs {
		var attempts [][]row
		for k := range o.repeat {
			if ctx.Err() != nil {
				failures = append(failures, fmt.Sprintf("%s N=%d: not run: %v", j.shape, j.n, context.Cause(ctx)))
				break
			}
			if o.repeat > 1 {
				r.logf("%s N=%d: run %d of %d", j.shape, j.n, k+1, o.repeat)
			}
			if k > 0 {
				// Each run starts from nothing: the files, databases
				// and Puppet state of the previous run go.
				if err := clearDir(r.tmp); err != nil {
					return err
				}
			}
			var rows []row
			var err error
			switch j.shape {
			case shapeFuel:
				rows, err = r.runFuel(ctx, o.fuelTasks, o.fuelNodes)
			case shapeExecChain:
				rows, err = r.runExecChain(ctx, j.n)
			case shapeFleet:
				rows, err = r.runFleet(ctx, j.n)
			case shapeAgents:
				var got []idleRow
				got, err = r.runIdleAgents(ctx, o.idleAgents)
				idle = append(idle, got...)
			case shapePkger:
				rows, err = r.runPkger(ctx, j.n)
			default:
				rows, err = r.runFileShape(ctx, j.shape, j.n)
			}
			if err != nil {
				failures = append(failures, fmt.Sprintf("%s N=%d: %v", j.shape, j.n, err))
				r.logf("%s N=%d FAILED: %v", j.shape, j.n, err)
				if len(rows) == 0 {
					rows = []row{{Shape: j.shape, N: j.n, Phase: "-", Err: err.Error()}}
				}
				all = append(all, rows...)
				attempts = nil
				break
			}
			attempts = append(attempts, rows)
		}
		all = append(all, medianRows(attempts)...)
	}
	o.load = loadAverage()
	fmt.Println()
	if len(all) > 0 {
		printTable(os.Stdout, all, o.puppet != "", hasFleet(all))
	}
	if len(idle) > 0 {
		printIdle(os.Stdout, idle)
	}
	fmt.Printf("\n%d runs in %s; load average after: %s\n", len(jobs)*o.repeat, time.Since(started).Round(time.Second), o.load)
	if o.markdown != "" {
		md := markdown(m, o, all, failures, hasFleet(all))
		if len(idle) > 0 {
			md += "\nIdle agents:\n\n" + idleMarkdown(idle)
		}
		if err := os.WriteFile(o.markdown, []byte(md), 0o644); err != nil {
			return err
		}
		fmt.Printf("Markdown written to %s\n", o.markdown)
	}
	if len(failures) > 0 {
		return fmt.Errorf("%d runs failed:\n  %s", len(failures), strings.Join(failures, "\n  "))
	}
	return nil
}

// clearDir removes what dir holds, keeping dir.
func clearDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}
