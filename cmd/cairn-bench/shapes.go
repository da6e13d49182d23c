package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Shape names, in the order they run.
const (
	shapeFlat      = "flat"
	shapeGroups    = "groups"
	shapeChain     = "chain"
	shapePkger     = "pkger"
	shapeFuel      = "fuel"
	shapeExecChain = "exec-chain"
	shapeFleet     = "fleet"
	shapeAgents    = "agents"
)

// allShapes are the shapes run by default.
var allShapes = []string{shapeFlat, shapeGroups, shapeChain, shapePkger, shapeFuel, shapeExecChain}

// knownShapes are allShapes and the ones run only when named (-shapes):
// fleet, agents.
var knownShapes = append(slices.Clone(allShapes), shapeFleet, shapeAgents)

// pkgUnit is how many resources one unit of the pkger-like shape holds.
const pkgUnit = 10

// fileRes is one generated file: where it goes, what it holds and what it
// requires (paths of other generated files), so the same package can be
// written for Cairn and for Puppet.
type fileRes struct {
	name     string
	path     string
	content  string
	requires []string // names
}

// fileSet is a file shape at a size: its files in dependency order.
type fileSet struct {
	files []fileRes
	chain int // longest dependency chain, in steps
}

// genFiles generates flat, groups or chain: n files in dir.
func genFiles(shape, dir string, n int) (*fileSet, error) {
	fs := &fileSet{files: make([]fileRes, 0, n)}
	switch shape {
	case shapeFlat:
		// N files, no dependencies.
		for i := range n {
			name := fmt.Sprintf("f%06d", i)
			fs.files = append(fs.files, fileRes{name: name, path: filepath.Join(dir, name), content: fmt.Sprintf("file %d\n", i)})
		}
		fs.chain = 1
	case shapeGroups:
		// A root and 9 files requiring it, N/10 times.
		if n%10 != 0 {
			return nil, fmt.Errorf("groups: N=%d is not a multiple of 10", n)
		}
		for g := range n / 10 {
			root := fmt.Sprintf("g%05d-root", g)
			fs.files = append(fs.files, fileRes{name: root, path: filepath.Join(dir, root), content: fmt.Sprintf("group %d\n", g)})
			for m := 1; m < 10; m++ {
				name := fmt.Sprintf("g%05d-m%d", g, m)
				fs.files = append(fs.files, fileRes{name: name, path: filepath.Join(dir, name),
					content: fmt.Sprintf("group %d member %d\n", g, m), requires: []string{root}})
			}
		}
		fs.chain = 2
	case shapeChain:
		// Each file requires the one before.
		for i := range n {
			name := fmt.Sprintf("c%06d", i)
			f := fileRes{name: name, path: filepath.Join(dir, name), content: fmt.Sprintf("link %d\n", i)}
			if i > 0 {
				f.requires = []string{fmt.Sprintf("c%06d", i-1)}
			}
			fs.files = append(fs.files, f)
		}
		fs.chain = n
	default:
		return nil, fmt.Errorf("not a file shape: %s", shape)
	}
	return fs, nil
}

// q quotes a string as a YAML double-quoted scalar (JSON's escapes are
// YAML's).
func q(s string) string { return strconv.Quote(s) }

// yamlFiles is the Cairn package of a file set: one File document each.
func (fs *fileSet) yamlDocs() []string {
	docs := make([]string, len(fs.files))
	for i, f := range fs.files {
		var b strings.Builder
		fmt.Fprintf(&b, "apiVersion: cairn/v1\nkind: File\nmetadata: {name: %s}\nspec: {path: %s, content: %s, mode: \"0644\"}\n",
			f.name, q(f.path), q(f.content))
		if len(f.requires) > 0 {
			b.WriteString("dependsOn: [")
			for j, r := range f.requires {
				if j > 0 {
					b.WriteString(", ")
				}
				b.WriteString("File/" + r)
			}
			b.WriteString("]\n")
		}
		docs[i] = b.String()
	}
	return docs
}

// expected maps each file's path to its content.
func (fs *fileSet) expected() map[string]string {
	out := make(map[string]string, len(fs.files))
	for _, f := range fs.files {
		out[f.path] = f.content
	}
	return out
}

// puppetManifest is the same files with the same require edges, for
// `puppet apply`.
func (fs *fileSet) puppetManifest() string {
	byName := make(map[string]string, len(fs.files))
	for _, f := range fs.files {
		byName[f.name] = f.path
	}
	var b strings.Builder
	for _, f := range fs.files {
		fmt.Fprintf(&b, "file { %s:\n  ensure  => file,\n  content => %s,\n  mode    => '0644',\n", puppetString(f.path), puppetString(f.content))
		if len(f.requires) > 0 {
			b.WriteString("  require => [")
			for j, r := range f.requires {
				if j > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "File[%s]", puppetString(byName[r]))
			}
			b.WriteString("],\n")
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// puppetString is a double-quoted Puppet string.
func puppetString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "\n", `\n`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}

// pkgerSet is the pkger-like package: units of ten resources, each a
// directory, three files in it, a label, a bucket and a dashboard
// associated with the label (http objects on the platform), a file holding
// the bucket's id (read from the bucket's outputs), a command guarded by
// `creates` that assembles the three files, and a command guarded by
// `unless` that marks the unit ready once everything else is there.
type pkgerSet struct {
	dir   string
	units int
	chain int
}

func genPkger(dir string, n int) (*pkgerSet, error) {
	if n%pkgUnit != 0 {
		return nil, fmt.Errorf("pkger: N=%d is not a multiple of %d", n, pkgUnit)
	}
	// label → bucket → bucket.id file → ready command; directory → file →
	// assemble command → ready command.
	return &pkgerSet{dir: dir, units: n / pkgUnit, chain: 4}, nil
}

func (p *pkgerSet) unitDir(u int) string { return filepath.Join(p.dir, fmt.Sprintf("u%05d", u)) }

func (p *pkgerSet) yamlDocs() []string {
	docs := make([]string, 0, p.units*pkgUnit)
	for u := range p.units {
		d := p.unitDir(u)
		id := fmt.Sprintf("%05d", u)
		docs = append(docs,
			fmt.Sprintf("apiVersion: cairn/v1\nkind: Directory\nmetadata: {name: d%s}\nspec: {path: %s, mode: \"0755\"}\n", id, q(d)))
		for _, f := range []string{"a", "b", "c"} {
			docs = append(docs, fmt.Sprintf("apiVersion: cairn/v1\nkind: File\nmetadata: {name: %s%s}\nspec: {path: %s, content: %s, mode: \"0644\"}\ndependsOn: [Directory/d%s]\n",
				f, id, q(filepath.Join(d, f+".conf")), q(fmt.Sprintf("%s = %d\n", f, u)), id))
		}
		docs = append(docs,
			fmt.Sprintf("apiVersion: cairn/v1\nkind: Label\nmetadata: {name: l%s}\nspec: {name: %s}\n", id, q("label-"+id)),
			fmt.Sprintf("apiVersion: cairn/v1\nkind: Bucket\nmetadata: {name: b%s}\nspec:\n  name: %s\n  retentionPeriod: 30d\n  associations: [{kind: Label, name: l%s}]\n", id, q("bucket-"+id), id),
			fmt.Sprintf("apiVersion: cairn/v1\nkind: Dashboard\nmetadata: {name: db%s}\nspec:\n  name: %s\n  description: unit %d\n  associations: [{kind: Label, name: l%s}]\n", id, q("dash-"+id), u, id),
			fmt.Sprintf("apiVersion: cairn/v1\nkind: File\nmetadata: {name: id%s}\nspec:\n  path: %s\n  content: '{{ (dep \"Bucket/b%s\").id }}'\n  mode: \"0644\"\ndependsOn: [Directory/d%s, Bucket/b%s]\n",
				id, q(filepath.Join(d, "bucket.id")), id, id, id),
			fmt.Sprintf("apiVersion: cairn/v1\nkind: Exec\nmetadata: {name: assemble%s}\nspec:\n  cwd: %s\n  command: cat a.conf b.conf c.conf > all.conf\n  creates: %s\ndependsOn: [File/a%s, File/b%s, File/c%s]\n",
				id, q(d), q(filepath.Join(d, "all.conf")), id, id, id),
			fmt.Sprintf("apiVersion: cairn/v1\nkind: Exec\nmetadata: {name: ready%s}\nspec:\n  cwd: %s\n  command: touch ready\n  unless: test -f ready\ndependsOn: [Exec/assemble%s, File/id%s, Dashboard/db%s]\n",
				id, q(d), id, id, id),
		)
	}
	return docs
}

// expected is every file the package leaves on disk; "*" is any content
// (the bucket's id, the empty marker).
func (p *pkgerSet) expected() map[string]string {
	out := make(map[string]string, p.units*6)
	for u := range p.units {
		d := p.unitDir(u)
		all := ""
		for _, f := range []string{"a", "b", "c"} {
			c := fmt.Sprintf("%s = %d\n", f, u)
			out[filepath.Join(d, f+".conf")] = c
			all += c
		}
		out[filepath.Join(d, "all.conf")] = all
		out[filepath.Join(d, "bucket.id")] = "*"
		out[filepath.Join(d, "ready")] = ""
	}
	return out
}

// execChain is n commands on the control plane, each depending on the one
// before; each appends its number to a log, so the order can be checked.
type execChain struct {
	dir string
	n   int
}

func (e *execChain) log() string { return filepath.Join(e.dir, "chain.log") }

func (e *execChain) yamlDocs() []string {
	docs := make([]string, e.n)
	for i := range e.n {
		d := fmt.Sprintf("apiVersion: cairn/v1\nkind: Exec\nmetadata: {name: e%05d}\nspec: {command: %s}\n", i, q(fmt.Sprintf("echo %d >> %s", i, e.log())))
		if i > 0 {
			d += fmt.Sprintf("dependsOn: [Exec/e%05d]\n", i-1)
		}
		docs[i] = d
	}
	return docs
}

// fuelGraph is a Fuel graph: one role per node, tasks per role in a
// `requires` chain, and every tenth task of a role cross-depending on the
// same task of the previous role's node.
type fuelGraph struct {
	nodes, perRole int
	chain          int
}

func genFuel(tasks, nodes int) (*fuelGraph, error) {
	if nodes <= 0 || tasks%nodes != 0 {
		return nil, fmt.Errorf("fuel: %d tasks do not split evenly over %d nodes", tasks, nodes)
	}
	g := &fuelGraph{nodes: nodes, perRole: tasks / nodes}
	// Longest path: depth[r][i] = 1 + max(depth[r][i-1], cross ? depth[r-1][i] : 0).
	prev := make([]int, g.perRole)
	for r := range nodes {
		cur := make([]int, g.perRole)
		for i := range g.perRole {
			d := 0
			if i > 0 {
				d = cur[i-1]
			}
			if r > 0 && g.crosses(i) {
				d = max(d, prev[i])
			}
			cur[i] = d + 1
			g.chain = max(g.chain, cur[i])
		}
		prev = cur
	}
	return g, nil
}

func (g *fuelGraph) crosses(i int) bool { return i > 0 && i%10 == 0 }

func (g *fuelGraph) role(r int) string { return fmt.Sprintf("r%02d", r) }
func (g *fuelGraph) node(r int) string { return fmt.Sprintf("n%02d", r) }
func (g *fuelGraph) task(r, i int) string {
	return fmt.Sprintf("%s-t%03d", g.role(r), i)
}

// yaml is the graph as a release would upload it (Fuel's tasks.yaml shape).
func (g *fuelGraph) yaml() string {
	var b strings.Builder
	b.WriteString("apiVersion: cairn/v1\nkind: Graph\nmetadata: {name: bench, type: default}\ntasks:\n")
	for r := range g.nodes {
		for i := range g.perRole {
			fmt.Fprintf(&b, "  - id: %s\n    type: shell\n    roles: [%s]\n    parameters: {cmd: \"true\"}\n", g.task(r, i), g.role(r))
			if i > 0 {
				fmt.Fprintf(&b, "    requires: [%s]\n", g.task(r, i-1))
			}
			if r > 0 && g.crosses(i) {
				fmt.Fprintf(&b, "    cross_depends:\n      - {name: %s, role: %s}\n", g.task(r-1, i), g.role(r-1))
			}
		}
	}
	return b.String()
}
