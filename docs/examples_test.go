// Package docs_test runs every shell example of README.md and docs/*.md,
// so that the documentation cannot drift from what the CLI and the API do.
//
// The one form of a shell example is a fenced block whose info string is
// `sh`:
//
//	```sh
//	./bin/cairn validate examples/hello/package.yaml
//	```
//
// Each block runs as a script of `bash -euo pipefail` and must exit 0. A
// fenced `text` block placed right after an `sh` block (only blank lines
// between them) is that block's expected output: each of its non-blank
// lines must appear in what the script printed (stdout and stderr
// together), in order; `…` in an expected line matches any text (ids,
// timings), and runs of blanks count as one (table columns). Other languages (yaml, json, python, plain ```) are shown,
// never run; `bash`, `shell`, `console` and `zsh` blocks are refused, so
// that no example escapes the test by its spelling.
//
// A block that cannot run here (one that starts the development
// environment, installs packages, needs another host) is preceded, on
// the line right before its fence, by a visible marker with its reason:
//
//	<!-- not run: starts the development environment, which this test replaces -->
//
// A marker without a reason, or one not followed by an `sh` block, fails
// the test.
//
// The blocks run in document order, README.md first and then docs/*.md by
// name, in one working directory that holds a copy of the repository's
// examples/ and the freshly built binary as bin/cairn, so files an earlier
// block writes are there for later ones. They share one server: the test
// builds `cairn`, starts a Temporal dev server (internal/testenv;
// $CAIRN_TEMPORAL_BIN, set by `make test`) and `cairn server
// --example-cluster demo` on it, as `make run` does, with its data in
// the working directory's .data/, the control plane's paths confined to
// .data/control/ and a codec key (the guides ask for one for secrets). The blocks' environment is the one the README asks a
// reader to have: CAIRN_SERVER names the test's server (whose default is
// `make run`'s), CAIRN_TEMPORAL_ADDRESS and TEMPORAL_ADDRESS the test's
// Temporal (default: `make run`'s), CAIRN_CODEC_KEY the server's key, and
// PATH starts with bin/ and the Temporal CLI's directory. Cost: one dev server and one
// server process for the whole run, a few seconds per document.
package docs_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopTemporal()
	os.Exit(code)
}

// block is one fenced block of a document.
type block struct {
	doc    string // path relative to the repository
	line   int    // line of the opening fence
	lang   string // info string
	body   string
	notRun string // reason of the marker before it; "" when it runs
	marked bool   // a marker preceded the fence
	output *block // the expected-output block that follows it
}

func (b *block) String() string { return fmt.Sprintf("%s:%d", b.doc, b.line) }

// refusedLangs are shell spellings other than the one form.
var refusedLangs = []string{"bash", "shell", "console", "zsh", "shell-session", "shellsession"}

// codecKey is the server's codec key, exported in the blocks' terminal as
// docs/packages-and-stacks.md asks (secrets are sealed with it; agents
// need the same key).
var codecKey = strings.Repeat("5e", 32)

// blanks is a run of spaces or tabs.
var blanks = regexp.MustCompile(`[ \t]+`)

// markerRE matches the not-run marker; group 1 is the reason.
var markerRE = regexp.MustCompile(`^<!--\s*not run\s*(?::(.*?))?-->\s*$`)

// parseBlocks reads the fenced blocks of one Markdown document, pairing each
// `sh` block with the `text` block that follows it.
func parseBlocks(doc string, data []byte) ([]*block, error) {
	var (
		blocks  []*block
		cur     *block
		fence   string
		body    strings.Builder
		prev    string // the last non-blank line outside a block
		lastSh  *block // an sh block whose output block may follow
		between bool   // only blank lines since lastSh closed
	)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if cur != nil {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, "`~") == "" {
				cur.body = body.String()
				if cur.lang == "text" && lastSh != nil && between {
					lastSh.output = cur
				} else {
					blocks = append(blocks, cur)
				}
				lastSh, between = nil, false
				if cur.lang == "sh" {
					lastSh, between = cur, true
				}
				cur, prev = nil, ""
				continue
			}
			body.WriteString(line)
			body.WriteByte('\n')
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			for strings.HasPrefix(trimmed[len(fence):], fence[:1]) {
				fence += fence[:1]
			}
			cur = &block{doc: doc, line: n, lang: strings.Fields(trimmed[len(fence):] + " x")[0]}
			if cur.lang == "x" {
				cur.lang = ""
			}
			body.Reset()
			if m := markerRE.FindStringSubmatch(prev); m != nil {
				cur.marked, cur.notRun = true, strings.TrimSpace(m[1])
			}
			continue
		}
		if trimmed != "" {
			if strings.Contains(trimmed, "not run") && strings.HasPrefix(trimmed, "<!--") && !markerRE.MatchString(trimmed) {
				return nil, fmt.Errorf("%s:%d: malformed not-run marker %q: write <!-- not run: REASON -->", doc, n, trimmed)
			}
			prev, between = trimmed, false
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: fenced block never closed", doc, cur.line)
	}
	return blocks, sc.Err()
}

// documents lists README.md and docs/*.md, relative to root.
func documents(t *testing.T, root string) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	slices.Sort(docs)
	out := []string{"README.md"}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		require.NoError(t, err)
		out = append(out, rel)
	}
	return out
}

// TestMarkdownBlocks checks the form of every document's blocks without
// running them: the rules above, and that the guides the README links
// exist.
func TestMarkdownBlocks(t *testing.T) {
	root, err := testenv.ModuleRoot()
	require.NoError(t, err)
	for _, doc := range documents(t, root) {
		data, err := os.ReadFile(filepath.Join(root, doc))
		require.NoError(t, err)
		blocks, err := parseBlocks(doc, data)
		require.NoError(t, err)
		for _, b := range blocks {
			assert.NotContains(t, refusedLangs, b.lang, "%s: shell examples are fenced as ```sh (the one form the docs test runs)", b)
			if b.marked {
				assert.NotEmpty(t, b.notRun, "%s: a not-run marker must give its reason: <!-- not run: REASON -->", b)
				assert.Equal(t, "sh", b.lang, "%s: a not-run marker stands right before an sh block", b)
			}
		}
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	assert.LessOrEqual(t, bytes.Count(readme, []byte("\n")), 300, "README.md is the front door: at most 300 lines, the rest in docs/")
}

// linkRE matches a Markdown link to a file of the repository (not a URL,
// not an anchor of the same page); group 1 is the path.
var linkRE = regexp.MustCompile(`\]\(([^)#:\s]+)(?:#[^)]*)?\)`)

// TestMarkdownLinks checks that every relative link of the documents leads
// to a file or directory of the repository.
func TestMarkdownLinks(t *testing.T) {
	root, err := testenv.ModuleRoot()
	require.NoError(t, err)
	for _, doc := range documents(t, root) {
		data, err := os.ReadFile(filepath.Join(root, doc))
		require.NoError(t, err)
		for _, m := range linkRE.FindAllStringSubmatch(string(data), -1) {
			target := filepath.Join(root, filepath.Dir(doc), m[1])
			_, err := os.Stat(target)
			assert.NoError(t, err, "%s links %s, which is not in the repository", doc, m[1])
		}
	}
}

func TestParseBlocks(t *testing.T) {
	doc := "# T\n\n<!-- not run: needs a host -->\n```sh\nmake run\n```\n\n```sh\necho hi\n```\n\n```text\nhi\n```\n\n" +
		"```yaml\nkind: File\n```\n\n```text\nnot an output\n```\n<!-- not run -->\n```sh\nx\n```\n"
	blocks, err := parseBlocks("t.md", []byte(doc))
	require.NoError(t, err)
	require.Len(t, blocks, 5)
	assert.Equal(t, "needs a host", blocks[0].notRun)
	assert.Equal(t, "echo hi\n", blocks[1].body)
	require.NotNil(t, blocks[1].output, "the text block after an sh block is its output")
	assert.Equal(t, "hi\n", blocks[1].output.body)
	assert.Nil(t, blocks[2].output)
	assert.Equal(t, "text", blocks[3].lang, "a text block after a yaml block is a block of its own")
	assert.True(t, blocks[4].marked)
	assert.Empty(t, blocks[4].notRun, "a marker without a reason is seen as one")

	_, err = parseBlocks("t.md", []byte("<!-- not run because -->\n```sh\nx\n```\n"))
	require.Error(t, err, "a marker without the colon is malformed")
}

func TestExpectOutput(t *testing.T) {
	got := "1 file: 3 resources: valid\nApply completed in 854ms (execution stack-1.2)\n  created:    2\n"
	require.NoError(t, matchOutput("1 file: 3 resources: valid\nApply completed in …\n  created:    2\n", got))
	require.Error(t, matchOutput("  created:    2\nApply completed in …\n", got), "lines must come in order")
	require.Error(t, matchOutput("4 errors\n", got))
	require.NoError(t, matchOutput("LAYER OWNER\ncluster  demo\n", "LAYER    OWNER\ncluster  demo\n"), "runs of blanks count as one")
}

// matchOutput checks that every non-blank line of want appears in got, in
// order, `…` matching any text. Runs of blanks count as one, so a table's
// columns may be as wide as its data makes them.
func matchOutput(want, got string) error {
	rest := blanks.ReplaceAllString(got, " ")
	for _, line := range strings.Split(want, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		parts := strings.Split(strings.TrimSpace(blanks.ReplaceAllString(line, " ")), "…")
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		re := regexp.MustCompile(strings.Join(parts, ".*"))
		loc := re.FindStringIndex(rest)
		if loc == nil {
			return fmt.Errorf("expected line %q not found (in order) in the output:\n%s", line, got)
		}
		rest = rest[loc[1]:]
	}
	return nil
}

// TestShellExamples runs every sh block of the docs against one server.
func TestShellExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a Temporal dev server and cairn server")
	}
	root, err := testenv.ModuleRoot()
	require.NoError(t, err)
	var all []*block
	for _, doc := range documents(t, root) {
		data, err := os.ReadFile(filepath.Join(root, doc))
		require.NoError(t, err)
		blocks, err := parseBlocks(doc, data)
		require.NoError(t, err)
		for _, b := range blocks {
			if b.lang == "sh" && !b.marked {
				all = append(all, b)
			}
		}
	}
	require.NotEmpty(t, all)

	dev := testenv.Temporal(t)
	temporalBin, err := testenv.TemporalBinary()
	require.NoError(t, err)
	work := t.TempDir()
	require.NoError(t, os.CopyFS(filepath.Join(work, "examples"), os.DirFS(filepath.Join(root, "examples"))))
	require.NoError(t, os.Remove(filepath.Join(work, "examples", "examples.go")))
	bin := filepath.Join(work, "bin", "cairn")
	build := exec.Command("go", "build", "-o", bin, "./cmd/cairn")
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	serverURL := startServer(t, bin, work, dev.HostPort)
	env := blockEnv(work, serverURL, dev.HostPort, filepath.Dir(temporalBin))
	for _, b := range all {
		ok := t.Run(strings.ReplaceAll(b.String(), "/", "_"), func(t *testing.T) {
			runBlock(t, b, work, env)
		})
		if !ok {
			// Later blocks build on this one's files and state.
			t.Fatalf("%s failed; the blocks after it were not run", b)
		}
	}
}

// blockEnv is the environment of every block: the reader's (HOME,
// PATH with bin/ first), the server's address, and nothing of Cairn's
// own settings from the test's environment.
func blockEnv(work, serverURL, temporal, temporalDir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CAIRN_") && !strings.HasPrefix(kv, "TEMPORAL_") && !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "NO_COLOR=") {
			env = append(env, kv)
		}
	}
	return append(env,
		"PATH="+filepath.Join(work, "bin")+string(os.PathListSeparator)+temporalDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"CAIRN_SERVER="+serverURL,
		"TEMPORAL_ADDRESS="+temporal,
		"CAIRN_TEMPORAL_ADDRESS="+temporal,
		"CAIRN_CODEC_KEY="+codecKey,
		"NO_COLOR=1",
	)
}

// runBlock runs one block and checks its exit status and expected output.
func runBlock(t *testing.T, b *block, work string, env []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", b.body)
	cmd.Dir, cmd.Env = work, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	require.NoError(t, err, "%s exited with an error:\n%s\n--- output:\n%s", b, b.body, out.String())
	if b.output != nil {
		require.NoError(t, matchOutput(b.output.body, out.String()), "%s: output (expected at %s)", b, b.output)
	}
}

// startServer runs `cairn server --example-cluster demo` with its data in
// work/.data, as `make run` does, and returns its URL once it is ready.
func startServer(t *testing.T, bin, work, temporal string) string {
	t.Helper()
	addr := freeAddr(t)
	data := filepath.Join(work, ".data")
	for _, d := range []string{"control", "files"} {
		require.NoError(t, os.MkdirAll(filepath.Join(data, d), 0o700))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "server", "--example-cluster", "demo")
	cmd.Dir = work
	cmd.Env = append(blockEnv(work, "", temporal, ""),
		"CAIRN_TEMPORAL_ADDRESS="+temporal,
		"CAIRN_API_ADDR="+addr,
		"CAIRN_DATA_DIR="+data,
		"CAIRN_CONTROL_ROOT="+filepath.Join(data, "control"),
		"CAIRN_FILES_DIR="+filepath.Join(data, "files"),
		"CAIRN_LOG_LEVEL=warn",
	)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 15 * time.Second
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cancel()
		<-done
		if t.Failed() {
			t.Logf("cairn server's log:\n%s", log.String())
		}
	})
	url := "http://" + addr
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("cairn server exited: %v\n%s", err, log.String())
		default:
		}
		resp, err := http.Get(url + "/readyz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK && exampleClusterReady(url) {
				return url
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("cairn server was not ready within 90s:\n%s", log.String())
	return ""
}

// exampleClusterReady reports whether the seeded cluster is there.
func exampleClusterReady(url string) bool {
	resp, err := http.Get(url + "/v1/clusters/demo")
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// freeAddr is a loopback address no one listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}
