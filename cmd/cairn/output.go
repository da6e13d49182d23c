package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"
)

// Output formats of the commands that print data.
const (
	formatTable = "table"
	formatJSON  = "json"
	formatYAML  = "yaml"
)

// outputFlags is -o and the colour switches.
type outputFlags struct {
	format  string
	noColor bool
	color   string
}

func (f *outputFlags) register(fs *pflag.FlagSet, def string) {
	fs.StringVarP(&f.format, "output", "o", def, "output format: table, json or yaml")
}

// registerColor adds --color and --no-color to commands that colour their
// output.
func (f *outputFlags) registerColor(fs *pflag.FlagSet) {
	fs.BoolVar(&f.noColor, "no-color", false, "never colour the output (same as NO_COLOR=1 or --color=never)")
	fs.StringVar(&f.color, "color", "auto", "colour the output: auto (when stdout is a terminal and NO_COLOR is not set), always or never")
}

func (f *outputFlags) check() error {
	switch f.format {
	case formatTable, formatJSON, formatYAML:
	default:
		return fmt.Errorf("-o %q: want table, json or yaml", f.format)
	}
	switch f.color {
	case "", "auto", "always", "never":
	default:
		return fmt.Errorf("--color %q: want auto, always or never", f.color)
	}
	return nil
}

// useColor decides whether w gets ANSI colours: never with --no-color,
// always with --color=always, otherwise only on a terminal and when
// NO_COLOR is unset or empty (https://no-color.org).
func (f *outputFlags) useColor(w io.Writer) bool {
	switch {
	case f.noColor || f.color == "never":
		return false
	case f.color == "always":
		return true
	}
	return os.Getenv("NO_COLOR") == "" && isTerminal(w)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// printData writes v as JSON or YAML; table output is the caller's.
func printData(w io.Writer, format string, v any) error {
	switch format {
	case formatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case formatYAML:
		data, err := toYAML(v)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	return fmt.Errorf("unknown output format %q", format)
}

// toYAML renders v as YAML with the field names and order of its JSON
// form, so both formats agree (the API's types carry only json tags).
func toYAML(v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("render YAML: %w", err)
	}
	blockStyle(&doc)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("render YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// blockStyle turns the flow style JSON parses into block style, keeping
// empty collections in flow style ([] and {}), and lets the encoder quote
// strings only where YAML needs it.
func blockStyle(n *yaml.Node) {
	switch n.Kind {
	case yaml.MappingNode, yaml.SequenceNode:
		n.Style = 0
		if len(n.Content) == 0 {
			n.Style = yaml.FlowStyle
		}
	case yaml.ScalarNode:
		if n.Style == yaml.DoubleQuotedStyle {
			n.Style = 0
			if strings.Contains(n.Value, "\n") {
				n.Style = yaml.LiteralStyle
			}
		}
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}

// table writes aligned columns.
type table struct {
	tw *tabwriter.Writer
}

func newTable(w io.Writer, headers ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
	if len(headers) > 0 {
		t.row(headers...)
	}
	return t
}

func (t *table) row(cells ...string) {
	for i, c := range cells {
		// A tab or newline inside a cell would break the columns.
		cells[i] = strings.NewReplacer("\t", " ", "\n", " ").Replace(c)
	}
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

func (t *table) flush() error { return t.tw.Flush() }

// formatTime renders a timestamp for tables: UTC, to the second.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

func formatTimePtr(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return formatTime(*t)
}

// formatDuration rounds a duration for people.
func formatDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "-"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// palette colours text with ANSI codes, or not at all.
type palette struct{ on bool }

func (p palette) wrap(code, s string) string {
	if !p.on || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p palette) green(s string) string  { return p.wrap("32", s) }
func (p palette) yellow(s string) string { return p.wrap("33", s) }
func (p palette) red(s string) string    { return p.wrap("31", s) }
func (p palette) cyan(s string) string   { return p.wrap("36", s) }
func (p palette) bold(s string) string   { return p.wrap("1", s) }
func (p palette) dim(s string) string    { return p.wrap("2", s) }
