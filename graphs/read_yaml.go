package graphs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/model"
)

// YAML tags of resolved scalars.
const (
	nullTag  = "!!null"
	boolTag  = "!!bool"
	intTag   = "!!int"
	floatTag = "!!float"
	strTag   = "!!str"
	mergeTag = "!!merge"
)

// readYAML decodes a multi-document YAML stream document by document
// (model.SplitYAML): the limits hold per document, each document's tree is
// handed to emit before the next is decoded, and a document over a limit
// is reported and skipped while the others are still read. The node tree
// keeps every value's line and column (counted in the stream, from the
// origin); aliases are checked and expanded here (see expander) so later
// steps see plain trees.
//
// Documents are decoded a run of up to yamlRunBytes at a time, with one
// decoder (a decoder costs more than a small document); a run that does
// not decode is decoded again document by document, so every document
// still stands on its own.
func (r *reader) readYAML(at origin, data []byte, emit func(*document)) {
	index := 0
	var run []model.YAMLChunk
	size := 0
	flush := func() {
		if len(run) > 0 {
			index = r.readYAMLRun(at, data, run, index, emit)
		}
		run, size = run[:0], 0
	}
	model.SplitYAML(data, func(ch model.YAMLChunk) bool {
		if marks := structureMarks(ch.Data); marks > r.lim.maxNodes {
			flush()
			r.c.add(model.Position{Source: at.name, Doc: at.doc + index, Line: at.line + ch.Line}, "",
				"document has too many lines and list items (%d, limit %d)", marks, r.lim.maxNodes)
			index++
			return true
		}
		if size > 0 && size+len(ch.Data) > yamlRunBytes {
			flush()
		}
		run = append(run, ch)
		size += len(ch.Data)
		return true
	})
	flush()
}

// yamlRunBytes bounds the documents one decoder reads.
const yamlRunBytes = 64 << 10

// readYAMLRun decodes a run of chunks, the first document numbered index,
// and returns the index of the next. The run's documents are emitted once
// all of them decoded; when one does not, the run is decoded chunk by
// chunk instead, each chunk's errors its own.
func (r *reader) readYAMLRun(at origin, data []byte, run []model.YAMLChunk, index int, emit func(*document)) int {
	if len(run) > 1 {
		first, last := run[0], run[len(run)-1]
		var held []*document
		next, ok := r.decodeYAML(at, data[first.Offset:last.Offset+len(last.Data)], first.Line, index, false, func(d *document) { held = append(held, d) })
		if ok {
			for _, d := range held {
				emit(d)
			}
			return next
		}
	}
	for _, ch := range run {
		index, _ = r.decodeYAML(at, ch.Data, ch.Line, index, true, emit)
	}
	return index
}

// decodeYAML decodes the documents of data, which starts at line of the
// source, the first numbered index; it returns the index of the next and
// whether every document decoded. A document that does not decode is
// reported when report is set, and ends the decoding either way.
func (r *reader) decodeYAML(at origin, data []byte, line, index int, report bool, emit func(*document)) (int, bool) {
	lineOff := at.line + line - 1
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		err := decodeYAMLNode(dec, &n)
		if errors.Is(err, io.EOF) {
			return index, true
		}
		if err != nil {
			if report {
				line, msg := yamlErrorPosition(err)
				pos := model.Position{Source: at.name, Doc: at.doc + index}
				if line > 0 {
					pos.Line = lineOff + line
				}
				r.c.add(pos, "", "invalid YAML: %s", msg)
			}
			return index + 1, false
		}
		if n.Kind != yaml.DocumentNode || len(n.Content) == 0 {
			index++
			continue
		}
		root := n.Content[0]
		d := &document{source: at.name, index: at.doc + index, format: FormatYAML}
		// Each document has the whole budget: the limits are per document.
		x := expander{doc: d, c: r.c, maxDepth: r.lim.maxDepth, budget: r.lim.maxNodes, maxNodes: r.lim.maxNodes, lineOffset: lineOff}
		if !x.expandRoot(root) {
			index++
			continue
		}
		us := units(root)
		if len(us) == 0 {
			index++
			continue
		}
		for _, u := range us {
			emit(&document{source: at.name, index: at.doc + index, root: u, format: FormatYAML})
			index++
		}
	}
}

// decodeYAMLNode decodes one document, turning a panic inside the YAML
// library into an error: no input may crash the process.
func decodeYAMLNode(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("yaml: %v", p)
		}
	}()
	return dec.Decode(n)
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (?s)(.*)$`)

// yamlParserProblems are the problems yaml.v3's parser (not its scanner)
// reports. For these its error text names the line of the construct being
// parsed counted from 0, not from 1; yamlErrorPosition corrects that.
var yamlParserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// yamlErrorPosition extracts the line yaml.v3 names in its error text.
func yamlErrorPosition(err error) (int, string) {
	msg := err.Error()
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		if yamlParserProblems[m[2]] {
			line++
		}
		return line, m[2]
	}
	return 0, strings.TrimPrefix(msg, "yaml: ")
}

// expander walks a freshly decoded YAML tree once: it replaces each alias
// by the node it names (sharing it, never copying), applies merge keys
// (<<), keeps the last value of a duplicate key with a warning, and
// refuses trees that are nested too deeply or that aliases would expand
// past the node budget. An
// alias bomb is refused after visiting each anchored node once, because
// the expanded size of every anchored node is computed once and reused.
type expander struct {
	doc      *document
	c        *collector
	maxDepth int
	maxNodes int
	budget   int
	// lineOffset is added to every node's line: the lines of the stream
	// before the document's chunk.
	lineOffset int
	memo       map[*yaml.Node]nodeStat
	active     map[*yaml.Node]bool
	failed     bool
}

type nodeStat struct {
	size   int // nodes after expanding aliases
	height int // nesting levels below the node
}

func (x *expander) expandRoot(root *yaml.Node) bool {
	if x.lineOffset != 0 {
		root.Line += x.lineOffset
	}
	if root.Kind == yaml.AliasNode {
		x.fail(root, "a document cannot be an alias")
		return false
	}
	x.node(root, 1)
	return !x.failed
}

func (x *expander) fail(n *yaml.Node, format string, args ...any) {
	if x.failed {
		return
	}
	x.failed = true
	x.c.add(x.doc.pos(n), "", format, args...)
}

func (x *expander) node(n *yaml.Node, depth int) nodeStat {
	if x.failed {
		return nodeStat{}
	}
	if n.Anchor != "" {
		if x.active == nil {
			x.active = map[*yaml.Node]bool{}
			x.memo = map[*yaml.Node]nodeStat{}
		}
		x.active[n] = true
		defer delete(x.active, n)
	}
	if depth > x.maxDepth {
		x.fail(n, "values are nested more than %d levels deep", x.maxDepth)
		return nodeStat{}
	}
	x.budget--
	if x.budget < 0 {
		x.fail(n, "document has more than %d values (aliases included)", x.maxNodes)
		return nodeStat{}
	}
	st := nodeStat{size: 1}
	for i, child := range n.Content {
		// Mapping keys sit at their mapping's level; values and list
		// items one deeper.
		childDepth := depth + 1
		if n.Kind == yaml.MappingNode && i%2 == 0 {
			childDepth = depth
		}
		var cs nodeStat
		if x.lineOffset != 0 {
			// Every node is visited here once (an alias's target before
			// it, as its anchor comes first; each use of an alias is a
			// node of its own).
			child.Line += x.lineOffset
		}
		if child.Kind == yaml.AliasNode {
			cs = x.alias(child, childDepth)
			n.Content[i] = child.Alias
		} else {
			cs = x.node(child, childDepth)
		}
		if x.failed {
			return nodeStat{}
		}
		st.size += cs.size
		if childDepth > depth {
			st.height = max(st.height, cs.height+1)
		}
	}
	if n.Kind == yaml.MappingNode {
		x.mapping(n)
	}
	if n.Anchor != "" {
		x.memo[n] = st
	}
	return st
}

// alias accounts for one use of an anchored value. YAML defines anchors
// before their aliases, so the value was expanded once already and its
// size and height are known; an alias to a value still being expanded
// refers to its own ancestor.
func (x *expander) alias(a *yaml.Node, depth int) nodeStat {
	target := a.Alias
	if target == nil {
		x.fail(a, "unknown alias *%s", a.Value)
		return nodeStat{}
	}
	if x.active[target] {
		x.fail(a, "alias *%s refers to the value that contains it", a.Value)
		return nodeStat{}
	}
	st, ok := x.memo[target]
	if !ok {
		x.fail(a, "alias *%s refers to a value that could not be read", a.Value)
		return nodeStat{}
	}
	if depth+st.height > x.maxDepth {
		x.fail(a, "values are nested more than %d levels deep (through alias *%s)", x.maxDepth, a.Value)
		return nodeStat{}
	}
	x.budget -= st.size
	if x.budget < 0 {
		x.fail(a, "document has more than %d values after expanding alias *%s", x.maxNodes, a.Value)
		return nodeStat{}
	}
	return st
}

// mapping applies merge keys and removes duplicate keys, keeping the last
// value in the first key's place and warning about each.
// Explicit keys win over merged ones; earlier merge sources win over
// later ones, as YAML's merge key specifies.
func (x *expander) mapping(n *yaml.Node) {
	content := n.Content
	hasMerge := false
	for i := 0; i+1 < len(content); i += 2 {
		if k := content[i]; k.Kind == yaml.ScalarNode && k.ShortTag() == mergeTag {
			hasMerge = true
			break
		}
	}
	var merged []*yaml.Node
	if hasMerge {
		explicit := make([]*yaml.Node, 0, len(content))
		for i := 0; i+1 < len(content); i += 2 {
			k, v := content[i], content[i+1]
			if k.Kind != yaml.ScalarNode || k.ShortTag() != mergeTag {
				explicit = append(explicit, k, v)
				continue
			}
			sources := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				sources = v.Content
			}
			for _, s := range sources {
				if s.Kind != yaml.MappingNode {
					x.c.add(x.doc.pos(s), "", "merge key << needs a mapping or a list of mappings")
					continue
				}
				merged = append(merged, s.Content...)
			}
		}
		content = explicit
	}
	if !hasMerge && len(content) <= 32 && !smallHasDuplicates(content) {
		return // the common case: a small mapping, checked without allocating
	}
	seen := newKeySet(len(content)/2 + len(merged)/2)
	out := content[:0:0]
	changed := hasMerge
	var at map[*yaml.Node]int // first key → index of its value in out
	for i := 0; i+1 < len(content); i += 2 {
		k := content[i]
		if k.Kind == yaml.ScalarNode {
			if first := seen.add(k); first != nil {
				if !changed {
					out = append(out, content[:i]...)
				}
				changed = true
				if at == nil {
					at = valueIndex(out)
				}
				// Fuel's loader (PyYAML) kept the last value, in the
				// first key's place: so does Cairn, with a warning.
				out[at[first]] = content[i+1]
				x.c.warn(x.doc.pos(k), "", "duplicate key %q (first at line %d): the last value is used, as Fuel's loader did", k.Value, first.Line)
				continue
			}
		}
		if changed {
			out = append(out, k, content[i+1])
			if at != nil {
				at[k] = len(out) - 1
			}
		}
	}
	if !changed {
		return
	}
	for i := 0; i+1 < len(merged); i += 2 {
		if k := merged[i]; k.Kind != yaml.ScalarNode || seen.add(k) == nil {
			out = append(out, k, merged[i+1])
		}
	}
	n.Content = out
}

// valueIndex maps each key of a mapping's content to its value's index.
func valueIndex(content []*yaml.Node) map[*yaml.Node]int {
	out := make(map[*yaml.Node]int, len(content)/2)
	for i := 0; i+1 < len(content); i += 2 {
		out[content[i]] = i + 1
	}
	return out
}

// smallHasDuplicates reports whether a small mapping repeats a key.
func smallHasDuplicates(content []*yaml.Node) bool {
	for i := 2; i+1 < len(content); i += 2 {
		k := content[i]
		if k.Kind != yaml.ScalarNode {
			continue
		}
		for j := 0; j < i; j += 2 {
			if o := content[j]; o.Kind == yaml.ScalarNode && o.Value == k.Value {
				return true
			}
		}
	}
	return false
}

// keySet finds repeated mapping keys: a linear scan for the small
// mappings documents are made of, a map for large ones so a hostile
// mapping with a million keys costs linear time.
type keySet struct {
	small []*yaml.Node
	large map[string]*yaml.Node
}

func newKeySet(n int) *keySet {
	if n > 16 {
		return &keySet{large: make(map[string]*yaml.Node, n)}
	}
	return &keySet{small: make([]*yaml.Node, 0, n)}
}

// add records k and returns the earlier key of the same value, if any.
func (s *keySet) add(k *yaml.Node) *yaml.Node {
	if s.large != nil {
		if first, ok := s.large[k.Value]; ok {
			return first
		}
		s.large[k.Value] = k
		return nil
	}
	for _, first := range s.small {
		if first.Value == k.Value {
			return first
		}
	}
	s.small = append(s.small, k)
	return nil
}

// mapGet returns the value of key in a mapping node, or nil.
func mapGet(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Kind == yaml.ScalarNode && k.Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
