package providers

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func TestCaptureKeepsHeadAndTail(t *testing.T) {
	tests := []struct {
		name     string
		limit    streamLimit
		writes   []string
		wantKept string
		wantAt   int
		wantDrop int64
	}{
		{name: "fits", limit: streamLimit{Head: 4, Tail: 4}, writes: []string{"abc", "def"}, wantKept: "abcdef", wantAt: 4},
		{name: "exactly full", limit: streamLimit{Head: 4, Tail: 4}, writes: []string{"abcdefgh"}, wantKept: "abcdefgh", wantAt: 4},
		{name: "one big write", limit: streamLimit{Head: 3, Tail: 3}, writes: []string{"0123456789"}, wantKept: "012789", wantAt: 3, wantDrop: 4},
		{name: "ring wraps", limit: streamLimit{Head: 2, Tail: 3}, writes: []string{"ab", "c", "d", "e", "f", "g"}, wantKept: "abefg", wantAt: 2, wantDrop: 2},
		{name: "partial ring writes", limit: streamLimit{Head: 1, Tail: 4}, writes: []string{"a", "bc", "de", "fgh", "ij"}, wantKept: "aghij", wantAt: 1, wantDrop: 5},
		{name: "head only", limit: streamLimit{Head: 3}, writes: []string{"abcdef"}, wantKept: "abc", wantAt: 3, wantDrop: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCapture(tt.limit)
			total := 0
			for _, w := range tt.writes {
				n, err := c.Write([]byte(w))
				require.NoError(t, err)
				require.Equal(t, len(w), n)
				total += len(w)
			}
			kept, cut := c.result()
			assert.Equal(t, tt.wantKept, string(kept))
			assert.Equal(t, tt.wantAt, cut.At)
			assert.Equal(t, tt.wantDrop, cut.Dropped)
			assert.Equal(t, int64(total), int64(len(kept))+cut.Dropped)
		})
	}
}

func TestOutputTextNamesTheCut(t *testing.T) {
	assert.Equal(t, "whole", outputText([]byte("whole"), outputCut{At: 5}))
	// "é" is two bytes; the cut splits one on each side.
	kept := []byte("ab\xc3" + "\xa9cd")
	got := outputText(kept, outputCut{At: 3, Dropped: 42})
	assert.Equal(t, "ab\n"+cutNotice(42)+"\ncd", got)
	assert.Contains(t, got, "42 bytes cut")
}

func TestExecOutputHeadAndTail(t *testing.T) {
	r := localRegistry(t)
	node := localNode(t)
	// 300,000 bytes between two markers: the middle is cut and counted.
	ch, err := r.Converge(context.Background(), Request{Kind: "exec", Name: "x", Node: node,
		Spec: model.Spec{"command": `printf 'START-MARKER'; head -c 300000 /dev/zero | tr '\0' a; printf 'END-MARKER'; echo oops >&2`}})
	require.NoError(t, err)
	out := ch.After.Outputs["stdout"].(string)
	dropped := int64(len("START-MARKER") + 300000 + len("END-MARKER") - outputHead - outputTail)
	assert.True(t, strings.HasPrefix(out, "START-MARKER"), "head kept")
	assert.True(t, strings.HasSuffix(out, "aaaEND-MARKER"), "tail kept")
	assert.Contains(t, out, "\n"+cutNotice(dropped)+"\n")
	assert.Equal(t, dropped, ch.After.Outputs["stdoutCut"])
	assert.Equal(t, "oops\n", ch.After.Outputs["stderr"])
	assert.NotContains(t, ch.After.Outputs, "stderrCut")
	assert.Less(t, len(out), outputHead+outputTail+200)
}

func TestExecFailureSaysOutputWasCut(t *testing.T) {
	r := localRegistry(t)
	_, err := r.Converge(context.Background(), Request{Kind: "exec", Name: "x", Node: localNode(t),
		Spec: model.Spec{"command": `head -c 200000 /dev/zero >&2; echo last words >&2; exit 4`}})
	require.Error(t, err)
	want := strconv.Itoa(200000+len("last words\n")-outputHead-outputTail) + " bytes of stderr dropped from the middle"
	assert.Contains(t, err.Error(), want)
	assert.Contains(t, err.Error(), "last words")
}

// memoryProbeEnv makes the test binary, re-executed, run the 800 MB command
// and report its own peak RSS instead of testing.
const memoryProbeEnv = "CAIRN_TEST_EXEC_MEMORY_PROBE"

// memoryProbe is what the re-executed test binary reports.
type memoryProbe struct {
	HWMBefore, HWMAfter int64 // VmHWM in kB
	Stdout              string
	StdoutCut           int64
}

// A command printing 800 MB leaves the worker's peak RSS nearly where it
// was: the output is cut in the middle, not buffered. The command runs in a
// fresh process (this test binary, re-executed) whose VmHWM is its own.
func TestExecHugeOutputKeepsMemoryBounded(t *testing.T) {
	const size = 800_000_000
	if os.Getenv(memoryProbeEnv) == "1" {
		runMemoryProbe(t, size)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestExecHugeOutputKeepsMemoryBounded$", "-test.count=1")
	cmd.Env = append(os.Environ(), memoryProbeEnv+"=1")
	raw, err := cmd.CombinedOutput()
	require.NoError(t, err, "probe: %s", raw)
	var probe memoryProbe
	found := false
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "PROBE "); ok {
			require.NoError(t, json.Unmarshal([]byte(line), &probe))
			found = true
		}
	}
	require.True(t, found, "the probe reported nothing: %s", raw)
	growthMB := (probe.HWMAfter - probe.HWMBefore) / 1024
	t.Logf("peak RSS %d kB before, %d kB after: +%d MB", probe.HWMBefore, probe.HWMAfter, growthMB)
	assert.Less(t, growthMB, int64(100), "peak RSS grew by %d MB for 800 MB of output", growthMB)
	assert.Equal(t, int64(size-outputHead-outputTail), probe.StdoutCut)
	assert.Contains(t, probe.Stdout, cutNotice(probe.StdoutCut))
}

func runMemoryProbe(t *testing.T, size int) {
	before := vmHWM(t)
	r := localRegistry(t)
	ch, err := r.Converge(context.Background(), Request{Kind: "exec", Name: "loud", Node: localNode(t),
		Spec: model.Spec{"command": "head -c " + strconv.Itoa(size) + " /dev/zero"}})
	require.NoError(t, err)
	after := vmHWM(t)
	cut, _ := ch.After.Outputs["stdoutCut"].(int64)
	raw, err := json.Marshal(memoryProbe{HWMBefore: before, HWMAfter: after, Stdout: ch.After.Outputs["stdout"].(string), StdoutCut: cut})
	require.NoError(t, err)
	os.Stdout.WriteString("PROBE " + string(raw) + "\n")
}

// vmHWM is this process's peak resident set size in kB.
func vmHWM(t *testing.T) int64 {
	raw, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
	return 0
}
