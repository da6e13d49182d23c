package graphs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"sync"
)

// JsonnetChildEnv marks a process started by JsonnetProcess to evaluate
// one Jsonnet program (see ServeJsonnetChild).
const JsonnetChildEnv = "CAIRN_JSONNET_CHILD"

// childHeader starts a Jsonnet child's answer, so a program that does not
// serve evaluation (its main never calls ServeJsonnetChild) is recognised
// instead of its output being taken for JSON.
const childHeader = "cairn-jsonnet/1\n"

// Exit codes of a Jsonnet child.
const (
	childExitOK        = 0
	childExitJsonnet   = 3 // the program's own error, as JSON on stdout
	childExitBadInput  = 4
	defaultChildMemory = 1 << 30
	childStackLimit    = 16 << 20
)

// JsonnetProcess evaluates each Jsonnet program in a child process, so a
// hostile program can neither crash nor exhaust the server: the child
// caps its own memory and goroutine stack, and is killed when the
// deadline passes or its output outgrows the limit. The child is this
// program itself (or Path), started with JsonnetChildEnv set; its main must
// call ServeJsonnetChild first thing.
type JsonnetProcess struct {
	// Path is the executable; empty means this program (os.Executable).
	Path string
	// Args are passed to the child before anything else (a test binary
	// needs none when TestMain calls ServeJsonnetChild).
	Args []string
	// MaxMemory caps the child's memory (default 1 GiB).
	MaxMemory int64
}

// childRequest is what the parent sends on the child's stdin.
type childRequest struct {
	JsonnetRequest
	MaxMemory int64 `json:"maxMemory"`
}

// EvaluateJsonnet implements JsonnetEvaluator.
func (jp JsonnetProcess) EvaluateJsonnet(ctx context.Context, req JsonnetRequest) ([]byte, error) {
	if os.Getenv(JsonnetChildEnv) == "1" {
		// A child that did not serve (see childHeader) must not start more.
		return nil, errors.New("jsonnet sandbox: a sandbox child cannot start another")
	}
	path := jp.Path
	if path == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("jsonnet sandbox: %w", err)
		}
		path = exe
	}
	mem := jp.MaxMemory
	if mem <= 0 {
		mem = defaultChildMemory
	}
	in, err := json.Marshal(childRequest{JsonnetRequest: req, MaxMemory: mem})
	if err != nil {
		return nil, fmt.Errorf("jsonnet sandbox: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, jp.Args...)
	// Only the marker: the child needs nothing of the server's environment
	// (and must not see its secrets).
	cmd.Env = []string{JsonnetChildEnv + "=1"}
	cmd.Stdin = bytes.NewReader(in)
	limit := req.MaxOutput
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	stdout := &cappedBuffer{limit: limit + 64<<10, onOverflow: cancel}
	stderr := &cappedBuffer{limit: 16 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	runErr := cmd.Run()
	out, served := bytes.CutPrefix(stdout.Bytes(), []byte(childHeader))
	switch {
	case stdout.overflow:
		return nil, &JsonnetError{Message: fmt.Sprintf("evaluated JSON is larger than the limit of %s", byteSize(limit))}
	case ctx.Err() != nil && runErr != nil:
		return nil, fmt.Errorf("jsonnet evaluation stopped: %w", context.Cause(ctx))
	case runErr == nil && served:
		return out, nil
	case runErr == nil:
		return nil, fmt.Errorf("jsonnet sandbox: %s does not serve Jsonnet evaluation (its main must call graphs.ServeJsonnetChild first)", path)
	}
	var exitErr *exec.ExitError
	if served && errors.As(runErr, &exitErr) && exitErr.ExitCode() == childExitJsonnet {
		var je JsonnetError
		if err := json.Unmarshal(out, &je); err == nil && je.Message != "" {
			return nil, &je
		}
	}
	return nil, fmt.Errorf("jsonnet evaluation failed: %s", childFailure(runErr, stderr.String()))
}

// childFailure explains why a child died: the runtime's fatal error line
// (out of memory, stack overflow) when there is one.
func childFailure(runErr error, stderr string) string {
	for _, line := range strings.Split(stderr, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.Contains(line, "out of memory"), strings.Contains(line, "cannot allocate memory"):
			return "exceeded the memory limit"
		case strings.Contains(line, "stack overflow"), strings.Contains(line, "stack exceeds"):
			return "exceeded the stack limit (recursion too deep)"
		}
	}
	for _, line := range strings.Split(stderr, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return fmt.Sprintf("%v: %s", runErr, line)
		}
	}
	return runErr.Error()
}

// cappedBuffer keeps at most limit bytes and reports overflow once.
type cappedBuffer struct {
	mu         sync.Mutex
	buf        bytes.Buffer
	limit      int64
	overflow   bool
	onOverflow func()
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.overflow {
		return 0, io.ErrShortWrite
	}
	if room := b.limit - int64(b.buf.Len()); int64(len(p)) > room {
		b.buf.Write(p[:max(room, 0)]) // keep the start: a crash report begins with its cause
		b.overflow = true
		if b.onOverflow != nil {
			b.onOverflow()
		}
		return 0, io.ErrShortWrite
	}
	return b.buf.Write(p)
}

func (b *cappedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Bytes()
}

func (b *cappedBuffer) String() string { return string(b.Bytes()) }

// ServeJsonnetChild makes this process a Jsonnet child when it was started
// as one (JsonnetChildEnv set): it evaluates the request on stdin, writes
// the result on stdout and exits. Otherwise it returns at once. Call it
// first thing in main (and in TestMain of packages that test sandboxed
// evaluation).
func ServeJsonnetChild() {
	if os.Getenv(JsonnetChildEnv) != "1" {
		return
	}
	os.Exit(serveJsonnetChild(os.Stdin, os.Stdout))
}

func serveJsonnetChild(in io.Reader, out io.Writer) int {
	var req childRequest
	data, err := io.ReadAll(io.LimitReader(in, 2*DefaultMaxTotalBytes))
	if err == nil {
		err = json.Unmarshal(data, &req)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "jsonnet child: bad request: %v\n", err)
		return childExitBadInput
	}
	// Bound this process before running the program: a fatal error here
	// ends only the child.
	if req.MaxMemory <= 0 {
		req.MaxMemory = defaultChildMemory
	}
	limitMemory(req.MaxMemory)
	debug.SetMaxStack(childStackLimit)
	if err := checkJsonnetSource(req.Name, req.Source, req.MaxDepth, true); err != nil {
		return writeChildError(out, err)
	}
	result, err := evaluateJsonnet(req.JsonnetRequest)
	if err != nil {
		return writeChildError(out, err)
	}
	if _, err := out.Write(append([]byte(childHeader), result...)); err != nil {
		return childExitBadInput
	}
	return childExitOK
}

func writeChildError(out io.Writer, err error) int {
	je, ok := err.(*JsonnetError)
	if !ok {
		je = &JsonnetError{Message: err.Error()}
	}
	b, _ := json.Marshal(je)
	out.Write(append([]byte(childHeader), b...))
	return childExitJsonnet
}
