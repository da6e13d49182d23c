package graphs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/model"
)

// Format is a document encoding.
type Format string

// Encodings Cairn reads. The empty Format means: decide by the source's
// file extension, else by its content.
const (
	FormatAuto    Format = ""
	FormatYAML    Format = "yaml"
	FormatJSON    Format = "json"
	FormatJsonnet Format = "jsonnet"
)

// Source is one file or URL of a package: its name (used in every error
// position), its bytes and, optionally, its encoding.
type Source struct {
	Name   string
	Data   []byte
	Format Format
	// Line and Doc place Data inside a larger stream it was cut from (a
	// part of an upload): the line Data starts at (0 and 1 both mean the
	// first) and the index of its first document. Every position read
	// from Data counts from there.
	Line int
	Doc  int
}

// FormatOf returns the encoding a file name implies, or FormatAuto.
func FormatOf(name string) Format {
	// A URL's query or fragment does not belong to the extension.
	if i := strings.IndexAny(name, "?#"); i >= 0 && strings.Contains(name, "://") {
		name = name[:i]
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml":
		return FormatYAML
	case ".json":
		return FormatJSON
	case ".jsonnet", ".libsonnet":
		return FormatJsonnet
	}
	return FormatAuto
}

// sniff guesses the encoding of data: JSON when it is valid JSON, Jsonnet
// when it starts like a Jsonnet program (local, function, import, a
// comment, or a bracket that does not open valid JSON), else YAML.
func sniff(data []byte) Format {
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	if len(trimmed) == 0 {
		return FormatYAML
	}
	if (trimmed[0] == '{' || trimmed[0] == '[') && jsonValid(trimmed) {
		return FormatJSON
	}
	for _, prefix := range []string{"local ", "local\t", "local\n", "function", "import ", "importstr ", "//", "/*", "{", "[", "std."} {
		if bytes.HasPrefix(trimmed, []byte(prefix)) {
			return FormatJsonnet
		}
	}
	return FormatYAML
}

// ReadFiles reads files into sources, named by their path and typed by
// their extension. A directory contributes its *.yaml, *.yml, *.json and
// *.jsonnet files (not its subdirectories), sorted by name. Files larger
// than DefaultMaxBytes are refused here rather than read whole.
func ReadFiles(paths ...string) ([]Source, error) {
	return ReadFilesLimit(DefaultMaxBytes, paths...)
}

// ReadFilesLimit is ReadFiles with a per-file size limit.
func ReadFilesLimit(maxBytes int64, paths ...string) ([]Source, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	var out []Source
	var errs []error
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("read documents: %w", err))
			continue
		}
		files := []string{p}
		if info.IsDir() {
			files, err = documentFiles(p)
			if err != nil {
				errs = append(errs, err)
				continue
			}
		}
		for _, f := range files {
			data, err := readFileLimit(f, maxBytes)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, Source{Name: f, Data: data, Format: FormatOf(f)})
		}
	}
	return out, errors.Join(errs...)
}

func documentFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read documents: %w", err)
	}
	var files []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		switch FormatOf(e.Name()) {
		case FormatYAML, FormatJSON:
			files = append(files, filepath.Join(dir, e.Name()))
		case FormatJsonnet:
			// Libraries are imported by programs, not documents themselves.
			if strings.EqualFold(filepath.Ext(e.Name()), ".jsonnet") {
				files = append(files, filepath.Join(dir, e.Name()))
			}
		}
	}
	sort.Strings(files)
	return files, nil
}

func readFileLimit(path string, maxBytes int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read documents: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > maxBytes {
		return nil, fmt.Errorf("read %s: file is larger than the limit of %s", path, byteSize(maxBytes))
	}
	return data, nil
}

// document is one resource, graph or kind definition (or a bare list of
// tasks) as read from a source: a tree of YAML nodes whatever the encoding,
// so every value keeps its line and column.
type document struct {
	source string
	index  int
	root   *yaml.Node
	format Format
}

// pos is the position of n in the document. Values of evaluated Jsonnet
// have no line (the evaluated JSON is nothing the author wrote).
func (d *document) pos(n *yaml.Node) model.Position {
	p := model.Position{Source: d.source, Doc: d.index}
	if n != nil {
		p.Line, p.Column = n.Line, n.Column
	}
	return p
}

// reader turns sources into documents, enforcing the limits.
type reader struct {
	opts       Options
	lim        limits
	c          *collector
	totalBytes int64
}

// read decodes one source into documents, handing each to emit as soon
// as it is read (so a caller may drop a document before the next is
// decoded). Problems are collected; what could be read is emitted.
func (r *reader) read(src Source, emit func(*document)) {
	name := src.Name
	if name == "" {
		name = "<input>"
	}
	srcPos := model.Position{Source: name, Doc: src.Doc, Line: src.Line}
	if int64(len(src.Data)) > r.lim.maxBytes {
		r.c.add(srcPos, "", "document is %s, larger than the limit of %s", byteSize(int64(len(src.Data))), byteSize(r.lim.maxBytes))
		return
	}
	r.totalBytes += int64(len(src.Data))
	if r.totalBytes > r.lim.maxTotalBytes {
		r.c.add(srcPos, "", "documents add up to more than the limit of %s", byteSize(r.lim.maxTotalBytes))
		return
	}
	format := src.Format
	if format == FormatAuto {
		format = FormatOf(name)
	}
	if format == FormatAuto {
		format = sniff(src.Data)
	}
	at := origin{name: name, line: max(src.Line, 1) - 1, doc: src.Doc}
	switch format {
	case FormatYAML:
		r.readYAML(at, src.Data, emit)
	case FormatJSON:
		r.readJSON(at, src.Data, FormatJSON, emit)
	case FormatJsonnet:
		r.readJsonnet(at, src.Data, emit)
	default:
		r.c.add(srcPos, "", "unknown document format %q (want yaml, json or jsonnet)", format)
	}
}

// origin is where a source's positions count from: its name, the lines
// before its first and the index of its first document (Source.Line and
// Source.Doc).
type origin struct {
	name string
	line int
	doc  int
}

// pos is the position of a line and column of the source's data.
func (o origin) pos(doc, line, col int) model.Position {
	p := model.Position{Source: o.name, Doc: o.doc + doc}
	if line > 0 {
		p.Line, p.Column = o.line+line, col
	}
	return p
}

// units splits the root of one decoded YAML document or JSON value into
// documents: a mapping is one document; a list is a list of documents
// when any element has apiVersion, kind or metadata, else a bare list of
// Fuel tasks (one document); null (an empty YAML document) is nothing.
func units(root *yaml.Node) []*yaml.Node {
	switch root.Kind {
	case yaml.SequenceNode:
		for _, item := range root.Content {
			if item.Kind == yaml.MappingNode && (mapGet(item, "kind") != nil || mapGet(item, "apiVersion") != nil || mapGet(item, "metadata") != nil) {
				return root.Content
			}
		}
		return []*yaml.Node{root}
	case yaml.ScalarNode:
		if root.ShortTag() == nullTag {
			return nil
		}
	}
	return []*yaml.Node{root}
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}
