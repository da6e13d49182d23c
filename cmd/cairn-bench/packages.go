package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

// pkgRun is one package shape at one size.
type pkgRun struct {
	shape  string
	n      int
	chain  int
	docs   []string
	phases []pkgPhase
}

// pkgPhase is an apply (or a dry-run) of the package and its check.
type pkgPhase struct {
	name   string
	dryRun bool
	check  func(ex *model.Execution) (string, error)
}

// runPackage applies a package to a fresh stack, phase by phase. The
// package is one YAML stream, as a user writes it in one file, sent as
// `cairn apply` sends it: in one request, or as an upload in parts when it
// is larger than one request may be (the client decides, as for the CLI).
func (r *runner) runPackage(ctx context.Context, e *env, p *pkgRun) ([]row, error) {
	in := model.StackInput{Name: fmt.Sprintf("bench-%s-%d", p.shape, p.n)}
	doc := &client.Document{Data: []byte(joinDocs(p.docs)), Format: "yaml"}
	via := fmt.Sprintf("one request of %s", sizeMiB(len(doc.Data)))
	if len(doc.Data) > client.SingleRequestBytes {
		parts, err := client.SplitDocument(*doc, client.DefaultPartBytes)
		if err != nil {
			return nil, err
		}
		via = fmt.Sprintf("%s in %d parts", sizeMiB(len(doc.Data)), len(parts))
	}
	st, err := e.api.CreateStack(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("create stack: %w", err)
	}
	var rows []row
	for _, ph := range p.phases {
		rw := row{Shape: p.shape, N: p.n, Phase: ph.name, Chain: p.chain, Via: via}
		start := apply(e, st.ID, doc)
		if ph.dryRun {
			start = dryRun(e, st.ID, doc)
		}
		err := r.phase(ctx, e, &rw, start, ph.check)
		rows = append(rows, rw)
		if err != nil {
			return rows, err
		}
	}
	return rows, nil
}

func joinDocs(docs []string) string {
	return strings.Join(docs, "---\n")
}

// sizeMiB renders a size in MiB.
func sizeMiB(n int) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// Report and plan checks.

func reportOf(ex *model.Execution) (*model.Report, error) {
	if ex.Report == nil {
		return nil, fmt.Errorf("execution %s has no report", ex.ID)
	}
	if ex.Report.Failed > 0 || len(ex.Report.Failures) > 0 || ex.Report.RolledBack {
		return nil, fmt.Errorf("execution %s: %d failed, rolled back %v: %v", ex.ID, ex.Report.Failed, ex.Report.RolledBack, ex.Report.Failures)
	}
	return ex.Report, nil
}

// wantCreated is a create's report: resources created, and commands that
// ran (reported as updated).
func wantCreated(created, ran int) func(*model.Execution) error {
	return func(ex *model.Execution) error {
		rep, err := reportOf(ex)
		if err != nil {
			return err
		}
		if rep.Created != created || rep.Updated != ran || rep.Deleted+rep.Skipped+rep.Unchanged != 0 {
			return fmt.Errorf("report %+v, want %d created and %d run", *rep, created, ran)
		}
		return nil
	}
}

func wantUnchanged(n int) func(*model.Execution) error {
	return func(ex *model.Execution) error {
		rep, err := reportOf(ex)
		if err != nil {
			return err
		}
		if rep.Unchanged != n || rep.Changed() || rep.Skipped != 0 {
			return fmt.Errorf("report %+v, want %d unchanged", *rep, n)
		}
		return nil
	}
}

// wantPlanNoop wants a plan with nothing to do but the guarded commands: a
// dry-run runs no command guard (`unless`, `onlyif`) unless asked, so it
// reports each such exec as one that would run.
func wantPlanNoop(n, guarded int) func(*model.Execution) error {
	return func(ex *model.Execution) error {
		if ex.Plan == nil {
			return errors.New("no plan")
		}
		s := ex.Plan.Summary
		if s.Noop != n-guarded || s.Run != guarded || s.Create+s.Update+s.Delete != 0 {
			return fmt.Errorf("plan summary %+v, want %d noop and %d to run (guards not run)", s, n-guarded, guarded)
		}
		return nil
	}
}

// filePhases are create, noop and dry-run of a package of n resources, of
// which commands are commands and guarded of those have a command guard;
// after each phase the files under dir must be exactly want, and extra (if
// any) must hold.
func filePhases(n, commands, guarded int, dir string, want map[string]string, extra func(phase string) (string, error)) []pkgPhase {
	checked := func(phase string, first func(*model.Execution) error) func(*model.Execution) (string, error) {
		return func(ex *model.Execution) (string, error) {
			if err := first(ex); err != nil {
				return "", err
			}
			count, err := checkFiles(dir, want)
			if err != nil {
				return "", err
			}
			note := fmt.Sprintf("%d files verified", count)
			if extra != nil {
				more, err := extra(phase)
				if err != nil {
					return "", err
				}
				note += "; " + more
			}
			return note, nil
		}
	}
	return []pkgPhase{
		{name: "create", check: checked("create", wantCreated(n-commands, commands))},
		{name: "noop", check: checked("noop", wantUnchanged(n))},
		{name: "dry-run", dryRun: true, check: checked("dry-run", wantPlanNoop(n, guarded))},
	}
}

// runFileShape measures flat, groups or chain, then Puppet on the same
// files when it is installed.
func (r *runner) runFileShape(ctx context.Context, shape string, n int) ([]row, error) {
	name := fmt.Sprintf("%s-%d", shape, n)
	dir := filepath.Join(r.tmp, name, "cairn-files")
	fs, err := genFiles(shape, dir, n)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	p := &pkgRun{shape: shape, n: n, chain: fs.chain, docs: fs.yamlDocs(), phases: filePhases(n, 0, 0, dir, fs.expected(), nil)}
	rows, err := r.withEnv(ctx, name, func(e *env) ([]row, error) { return r.runPackage(ctx, e, p) })
	if err != nil {
		return rows, err
	}
	// The disk's floor for the create, measured right after it.
	for i := range rows {
		if rows[i].Phase != "create" || rows[i].Err != "" {
			continue
		}
		floorDir := filepath.Join(r.tmp, name, "floor-files")
		rows[i].Floor, err = fileFloor(ctx, floorDir, fs)
		if rerr := os.RemoveAll(floorDir); err == nil {
			err = rerr
		}
		if err != nil {
			return rows, fmt.Errorf("floor: %w", err)
		}
		rows[i].Note += fmt.Sprintf("; floor: %s durable creates, %d at a time in batches of %d, in %s",
			thousands(n), floorParallel, floorBatch, secs(rows[i].Floor))
		r.logf("  floor of %s: %s durable creates in %s", rows[i].Phase, thousands(n), rows[i].Floor.Round(time.Millisecond))
	}
	switch {
	case r.opts.puppet == "":
	case n > r.opts.puppetMaxN:
		for i := range rows {
			rows[i].PuppetNote = "not run (N > -puppet-max-n)"
		}
	default:
		r.comparePuppet(ctx, shape, n, rows)
	}
	return rows, nil
}

// runPkger measures the pkger-like package against a fresh platform.
func (r *runner) runPkger(ctx context.Context, n int) ([]row, error) {
	name := fmt.Sprintf("pkger-%d", n)
	dir := filepath.Join(r.tmp, name, "cairn-files")
	ps, err := genPkger(dir, n)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	plat := r.loopback.freshPlatform()
	units := ps.units
	writes := 0
	extra := func(phase string) (string, error) {
		labels, buckets, dashes := plat.Labels(), plat.Buckets(), plat.Dashboards()
		if len(labels) != units || len(buckets) != units || len(dashes) != units {
			return "", fmt.Errorf("the platform holds %d labels, %d buckets, %d dashboards; want %d each", len(labels), len(buckets), len(dashes), units)
		}
		for _, coll := range []string{"buckets", "dashboards"} {
			for _, obj := range plat.Objects(coll) {
				id, _ := obj["id"].(string)
				if m := plat.MappingsOf(coll, id); len(m) != 1 {
					return "", fmt.Errorf("%s %s has %d labels, want 1", coll, id, len(m))
				}
			}
		}
		for u := range units {
			bucket, ok := plat.Find("buckets", fmt.Sprintf("bucket-%05d", u))
			got, err := os.ReadFile(filepath.Join(ps.unitDir(u), "bucket.id"))
			if !ok || err != nil || string(got) != bucket["id"] {
				return "", fmt.Errorf("unit %d: bucket.id holds %q, the platform's bucket is %v", u, got, bucket["id"])
			}
		}
		note := fmt.Sprintf("%d objects and their label mappings on the platform", 3*units)
		w := plat.Writes()
		if phase != "create" {
			if w != writes {
				return "", fmt.Errorf("the platform saw %d writes during %s", w-writes, phase)
			}
			note += ", no writes"
		}
		writes = w
		return note, nil
	}
	p := &pkgRun{shape: shapePkger, n: n, chain: ps.chain, docs: ps.yamlDocs(), phases: filePhases(n, 2*units, units, dir, ps.expected(), extra)}
	return r.withEnv(ctx, name, func(e *env) ([]row, error) { return r.runPackage(ctx, e, p) })
}

// runExecChain measures a chain of commands on the control plane. The
// commands are not guarded, so the second apply runs them all again.
func (r *runner) runExecChain(ctx context.Context, n int) ([]row, error) {
	name := fmt.Sprintf("exec-chain-%d", n)
	dir := filepath.Join(r.tmp, name, "cairn-files")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ec := &execChain{dir: dir, n: n}
	logHas := func(rounds int) error {
		data, err := os.ReadFile(ec.log())
		if err != nil {
			return err
		}
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		if len(lines) != rounds*n {
			return fmt.Errorf("%s has %d lines, want %d", ec.log(), len(lines), rounds*n)
		}
		for i, l := range lines {
			if l != fmt.Sprint(i%n) {
				return fmt.Errorf("%s line %d is %q, want %d: out of order", ec.log(), i+1, l, i%n)
			}
		}
		return nil
	}
	ran := func(round int) func(*model.Execution) (string, error) {
		return func(ex *model.Execution) (string, error) {
			if err := wantCreated(0, n)(ex); err != nil {
				return "", err
			}
			if err := logHas(round); err != nil {
				return "", err
			}
			return fmt.Sprintf("%d commands ran in order", n), nil
		}
	}
	phases := []pkgPhase{
		{name: "create", check: ran(1)},
		{name: "re-apply", check: ran(2)},
		{name: "dry-run", dryRun: true, check: func(ex *model.Execution) (string, error) {
			if ex.Plan == nil || ex.Plan.Summary.Run != n {
				return "", fmt.Errorf("plan %+v, want %d to run", ex.Plan, n)
			}
			if err := logHas(2); err != nil {
				return "", err
			}
			return fmt.Sprintf("%d to run, none ran", n), nil
		}},
	}
	p := &pkgRun{shape: shapeExecChain, n: n, chain: n, docs: ec.yamlDocs(), phases: phases}
	return r.withEnv(ctx, name, func(e *env) ([]row, error) { return r.runPackage(ctx, e, p) })
}
