package api

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/internal/testenv"
	"github.com/cairn-io/cairn/model"
)

// lanesPackage is lanes chains of length steps (200 in all): each step
// sleeps a little and waits for the one before it in its lane; one step
// fails until flag exists. Each step is a unit of its own (its timeout),
// so the steps change state one by one.
func lanesPackage(lanes, length int, failing, flag string) string {
	var b strings.Builder
	for l := range lanes {
		for i := range length {
			name := fmt.Sprintf("s-%02d-%02d", l, i)
			cmd := "sleep 0.05"
			if name == failing {
				cmd = "test -f " + flag
			}
			fmt.Fprintf(&b, "---\nkind: Exec\nmetadata: {name: %s}\nspec: {command: %q}\nmeta: {timeout: 60}\n", name, cmd)
			if i > 0 {
				fmt.Fprintf(&b, "dependsOn: [Exec/s-%02d-%02d]\n", l, i-1)
			}
		}
	}
	return b.String()
}

// browserErrors collects what the page reports as broken: exceptions and
// Content-Security-Policy refusals.
type browserErrors struct {
	mu   sync.Mutex
	list []string
}

func (b *browserErrors) listen(ctx context.Context) {
	_ = chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			b.list = append(b.list, fmt.Sprintf("exception at %s:%d: %s", d.URL, d.LineNumber, msg))
		case *log.EventEntryAdded:
			if strings.Contains(ev.Entry.Text, "Content Security Policy") {
				b.list = append(b.list, "csp: "+ev.Entry.Text)
			}
		}
	})
}

func (b *browserErrors) all() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.list...)
}

// TestE2ELivePage drives the live pages in headless Chromium against a
// real dev server and a token-configured API: the list (after the token is
// entered) links to a running 200-step execution; its page draws the
// graph and follows the events: steps change state without a reload, a
// step fails and the execution waits; the waiting step's "retry" (once the
// cause is fixed) lets the execution finish, and the page says completed.
// With CAIRN_UI_SCREENSHOT=path it saves a screenshot of the waiting
// execution there (the README's).
func TestE2ELivePage(t *testing.T) {
	chromium := testenv.Program(t, "chromium")
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 90*time.Second)
	root := t.TempDir()
	flag := filepath.Join(root, "fixed")

	st, err := h.client.CreateStack(ctx, client.StackInput{Name: "live"})
	require.NoError(t, err)
	doc := &client.Document{Data: []byte(lanesPackage(10, 20, "s-05-10", flag)), Format: "yaml"}
	ex, err := h.client.Apply(ctx, st.ID, doc, client.ApplyOptions{OnFailure: model.OnFailurePause})
	require.NoError(t, err)

	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.WindowSize(1400, 900),
		chromedp.UserDataDir(t.TempDir()))...)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()
	var errs browserErrors
	errs.listen(browser)
	_, err = chromedp.Call(browser, log.Enable, cdp.Empty{})
	require.NoError(t, err)
	do := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		stepCtx, cancel := context.WithTimeout(browser, 40*time.Second)
		defer cancel()
		if err := chromedp.Do(stepCtx, steps...); err != nil {
			page, _ := chromedp.Run(browser, chromedp.Evaluate[string](`document.body.innerText`))
			t.Fatalf("%v; the page shows:\n%s\nbrowser errors: %v", err, page, errs.all())
		}
	}
	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(browser, chromedp.Text(chromedp.CSS(sel)))
		require.NoError(t, err)
		return v
	}
	attr := func(sel, name string) string {
		t.Helper()
		v, err := chromedp.Run(browser, chromedp.AttributeValue(chromedp.CSS(sel), name))
		require.NoError(t, err)
		return v.Value
	}
	visible := func(sel string) chromedp.Action[chromedp.Void] { return chromedp.WaitVisible(chromedp.CSS(sel)) }

	// The list wants the token; once entered it links to the execution.
	do(chromedp.Navigate(h.url+"/ui/"), visible(`#message.error`))
	assert.Contains(t, text(`#message`), "token")
	link := `a[href="/ui/executions/` + ex.ID + `"]`
	do(chromedp.SendKeys(chromedp.CSS(`#token`), h.token), chromedp.Click(chromedp.CSS(`#token-form button[type=submit]`)),
		visible(link), chromedp.Click(chromedp.CSS(link)), visible(`#graph canvas`))
	_, err = chromedp.Run(browser, chromedp.Evaluate[int](`window.cairnNoReload = 42`))
	require.NoError(t, err)

	// The execution pauses on the failing step; the page shows it without
	// a reload, with the steps done so far.
	do(visible(`#status[data-status="waiting"]`), visible(`#waiting button.step-link`))
	waitingStep := attr(`#waiting button.step-link`, "data-step")
	counted := attr(`#counts`, "data-succeeded")
	assert.Contains(t, waitingStep, "s-05-10")
	temporalLink := attr(`#temporal-link`, "href")
	assert.True(t, strings.HasPrefix(temporalLink, testUIURL+"/namespaces/default/workflows/"), temporalLink)

	// A click on the waiting step shows its details and the decisions.
	do(chromedp.Click(chromedp.CSS(`#waiting button.step-link`)), visible(`#detail button.decision[data-action="retry"]`))
	assert.Equal(t, waitingStep, text(`#detail h2.step-id`))
	assert.NotEmpty(t, text(`#detail pre.error-text`))
	for _, a := range []string{"skip", "rollback", "abort"} {
		n, err := chromedp.Run(browser, chromedp.Evaluate[int](
			fmt.Sprintf(`document.querySelectorAll('#detail button.decision[data-action=%q]').length`, a)))
		require.NoError(t, err)
		assert.Equal(t, 1, n, a)
	}
	if shot := os.Getenv("CAIRN_UI_SCREENSHOT"); shot != "" {
		do(chromedp.Sleep(300 * time.Millisecond))
		png, err := chromedp.Run(browser, chromedp.CaptureScreenshot())
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(shot, png, 0o644))
	}

	// Fix the cause, retry from the page, and watch it finish.
	require.NoError(t, os.WriteFile(flag, nil, 0o644))
	do(chromedp.Click(chromedp.CSS(`#detail button.decision[data-action="retry"]`)), visible(`#status[data-status="completed"]`))
	assert.Equal(t, "completed", text(`#status`))
	noReload, err := chromedp.Run(browser, chromedp.Evaluate[string](`String(window.cairnNoReload)`))
	require.NoError(t, err)
	assert.Equal(t, "42", noReload, "the page reloaded")
	_, err = chromedp.Run(browser, chromedp.Poll[bool](`document.getElementById('counts').dataset.succeeded === '200'`,
		chromedp.WithPollingTimeout(10*time.Second)))
	require.NoError(t, err, "succeeded count %s", attr(`#counts`, "data-succeeded"))
	assert.NotEqual(t, "200", counted, "all steps had succeeded before the retry")

	final, err := h.client.GetExecution(ctx, ex.ID)
	require.NoError(t, err)
	mustStatus(t, final, model.ExecCompleted)

	// The graph the page drew: every step, each after the one before it
	// in its lane.
	graph, err := h.client.ExecutionGraph(ctx, ex.ID)
	require.NoError(t, err)
	require.Len(t, graph, 200)
	deps := map[string][]string{}
	for _, s := range graph {
		deps[s.ID] = s.DependsOn
	}
	assert.Equal(t, []string{"exec/s-03-06"}, deps["exec/s-03-07"])
	assert.Empty(t, deps["exec/s-03-00"])
	assert.Empty(t, errs.all())
}
