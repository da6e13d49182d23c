package graphs

import (
	"bytes"
	"time"
)

// Limits that keep hostile documents from hanging the reader or exhausting
// memory. Options override each of them; zero means the default.
const (
	// DefaultMaxBytes bounds one source (and the output of one Jsonnet
	// evaluation).
	DefaultMaxBytes int64 = 10 << 20
	// DefaultMaxTotalBytes bounds all sources of one Parse together,
	// Jsonnet imports included.
	DefaultMaxTotalBytes int64 = 32 << 20
	// DefaultMaxFileBytes bounds one file a command reads from the local
	// disk, and what it reads and evaluates altogether (a package of
	// 100,000 resources is about 15 MiB): the author's own files, which
	// reach the server in parts (see Options.Part) where each part is
	// held to the server's limits.
	DefaultMaxFileBytes int64 = 256 << 20
	// DefaultMaxNodes bounds the values of one document after YAML
	// aliases are expanded: an alias bomb is refused long before it is
	// expanded. A graph of 10,000 Fuel tasks has about 250,000. A stream
	// of many documents is held to it document by document.
	DefaultMaxNodes = 500_000
	// DefaultMaxDepth bounds the nesting of values (and of brackets in a
	// Jsonnet program).
	DefaultMaxDepth = 100
	// DefaultTimeout bounds one Jsonnet evaluation.
	DefaultTimeout = 10 * time.Second
	// DefaultJsonnetMaxStack bounds Jsonnet call depth, so runaway
	// recursion fails quickly.
	DefaultJsonnetMaxStack = 500
)

// limits are the effective limits of one Parse.
type limits struct {
	maxBytes      int64
	maxTotalBytes int64
	maxNodes      int
	maxDepth      int
	timeout       time.Duration
	maxStack      int
}

func (o Options) limits() limits {
	l := limits{
		maxBytes:      o.MaxBytes,
		maxTotalBytes: o.MaxTotalBytes,
		maxNodes:      o.MaxNodes,
		maxDepth:      o.MaxDepth,
		timeout:       o.Timeout,
		maxStack:      o.JsonnetMaxStack,
	}
	if l.maxBytes <= 0 {
		l.maxBytes = DefaultMaxBytes
	}
	if l.maxTotalBytes <= 0 {
		l.maxTotalBytes = DefaultMaxTotalBytes
	}
	if l.maxTotalBytes < l.maxBytes {
		l.maxTotalBytes = l.maxBytes
	}
	if l.maxNodes <= 0 {
		l.maxNodes = DefaultMaxNodes
	}
	if l.maxDepth <= 0 {
		l.maxDepth = DefaultMaxDepth
	}
	if l.timeout <= 0 {
		l.timeout = DefaultTimeout
	}
	if l.maxStack <= 0 {
		l.maxStack = DefaultJsonnetMaxStack
	}
	return l
}

// structureMarks counts the bytes that can start a new YAML value (line
// breaks and flow separators). Every value but the first needs one, so
// this bounds the number of values the YAML parser would build (about two
// per mark) and lets a source that would need too much memory be refused
// before it is parsed.
func structureMarks(data []byte) int {
	return bytes.Count(data, []byte{'\n'}) + bytes.Count(data, []byte{','}) +
		bytes.Count(data, []byte{'['}) + bytes.Count(data, []byte{'{'})
}
