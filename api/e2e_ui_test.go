package api

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
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

// TestE2ELivePage drives the live pages in headless Chromium against a
// real dev server and a token-configured API: the list (after the token is
// entered) links to a running 200-step execution; its page draws the
// graph and follows the events: steps change state without a reload, a
// step fails and the execution waits; the waiting step's "retry" (once the
// cause is fixed) lets the execution finish, and the page says completed.
// A click on a step's box on the graph canvas shows its details. With
// CAIRN_UI_SCREENSHOT=path it saves a screenshot of the waiting
// execution there (the README's).
func TestE2ELivePage(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 90*time.Second)
	root := t.TempDir()
	flag := filepath.Join(root, "fixed")

	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "live"})
	require.NoError(t, err)
	doc := &client.Document{Data: []byte(lanesPackage(10, 20, "s-05-10", flag)), Format: "yaml"}
	ex, err := h.client.Apply(ctx, st.ID, doc, client.ApplyOptions{OnFailure: model.OnFailurePause})
	require.NoError(t, err)

	b := newBrowserTab(t, ctx)
	// The list wants the token; once entered it links to the execution.
	b.do(chromedp.Navigate(h.url+"/ui/"), visible(`#message.error`))
	assert.Contains(t, b.text(`#message`), "token")
	link := `a[href="/ui/executions/` + ex.ID + `"]`
	b.do(chromedp.SendKeys(chromedp.CSS(`#token`), h.token), chromedp.Click(chromedp.CSS(`#token-form button[type=submit]`)),
		visible(link), chromedp.Click(chromedp.CSS(link)), visible(`#graph canvas`))
	_, err = chromedp.Run(b.ctx, chromedp.Evaluate[int](`window.cairnNoReload = 42`))
	require.NoError(t, err)

	// The execution pauses on the failing step; the page shows it without
	// a reload, with the steps done so far.
	b.do(visible(`#status[data-status="waiting"]`), visible(`#waiting button.step-link`))
	waitingStep := b.attr(`#waiting button.step-link`, "data-step")
	counted := b.attr(`#counts`, "data-succeeded")
	assert.Contains(t, waitingStep, "s-05-10")
	temporalLink := b.attr(`#temporal-link`, "href")
	assert.True(t, strings.HasPrefix(temporalLink, testUIURL+"/namespaces/default/workflows/"), temporalLink)

	// A click on a finished step's box on the canvas shows its details.
	b.clickBox("s:exec/s-00-00")
	b.do(chromedp.WaitVisible(chromedp.CSS(`#detail h2.step-id`)))
	b.poll(`document.querySelector('#detail h2.step-id').textContent === 'exec/s-00-00'`, 5*time.Second)
	assert.Equal(t, "succeeded", b.text(`#detail dl dd`))
	assert.Equal(t, []string{"s:exec/s-00-00"}, eval[[]string](b, `window.cairnCy.nodes('.selected').map((n) => n.id())`))

	// A click on the waiting step shows its details and the decisions.
	b.click(`#waiting button.step-link`)
	b.do(visible(`#detail button.decision[data-action="retry"]`))
	assert.Equal(t, waitingStep, b.text(`#detail h2.step-id`))
	assert.NotEmpty(t, b.text(`#detail pre.error-text`))
	for _, a := range []string{"skip", "rollback", "abort"} {
		n, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](
			fmt.Sprintf(`document.querySelectorAll('#detail button.decision[data-action=%q]').length`, a)))
		require.NoError(t, err)
		assert.Equal(t, 1, n, a)
	}
	if shot := os.Getenv("CAIRN_UI_SCREENSHOT"); shot != "" {
		b.do(chromedp.Sleep(300 * time.Millisecond))
		png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(shot, png, 0o644))
	}

	// Fix the cause, retry from the page, and watch it finish.
	require.NoError(t, os.WriteFile(flag, nil, 0o644))
	b.click(`#detail button.decision[data-action="retry"]`)
	b.do(visible(`#status[data-status="completed"]`))
	assert.Equal(t, "completed", b.text(`#status`))
	noReload, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`String(window.cairnNoReload)`))
	require.NoError(t, err)
	assert.Equal(t, "42", noReload, "the page reloaded")
	_, err = chromedp.Run(b.ctx, chromedp.Poll[bool](`document.getElementById('counts').dataset.succeeded === '200'`,
		chromedp.WithPollingTimeout(10*time.Second)))
	require.NoError(t, err, "succeeded count %s", b.attr(`#counts`, "data-succeeded"))
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
	assert.Empty(t, b.errs.all())
}

// TestE2ELivePageApproval approves plans from their live page, with a
// named token: a plan the stack moved under is refused and the page names
// the execution that moved it; a plan that holds is approved with a
// comment, the page links to the apply it started, and that apply's page
// shows it finish.
func TestE2ELivePageApproval(t *testing.T) {
	h, _ := approvalCairn(t)
	ctx := ctxTimeout(t, 2*time.Minute)
	dir := t.TempDir()
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "approve-on-page"})
	require.NoError(t, err)
	stale := planForApproval(t, h.client, st.ID, filesPackage(dir, "planned\n"), 0)
	other := h.applyWait(st.ID, filesPackage(dir, "other\n"), client.ApplyOptions{})
	mustStatus(t, other, model.ExecCompleted)

	b := newBrowserTab(t, ctx)
	b.do(chromedp.Navigate(h.url+"/ui/executions/"+stale.ID), visible(`#message.error`),
		chromedp.SendKeys(chromedp.CSS(`#token`), "alice-t0ken-approves"), chromedp.Click(chromedp.CSS(`#token-form button[type=submit]`)),
		visible(`#approval #approve`))
	assert.Equal(t, "create 3", b.text(`#approval-summary`))
	plan := b.text(`#approval .plan-steps`)
	assert.Contains(t, plan, "file/motd")
	assert.Contains(t, plan, "content\t\t{sha256}", "the plan shows each step's diff, contents redacted")
	assert.Contains(t, plan, filepath.Join(dir, "app", "motd"))
	assert.Equal(t, 3, eval[int](b, `document.querySelectorAll('#approval .plan-step').length`))

	// The stack moved: the approval is refused, naming what moved.
	b.click(`#approve`)
	b.do(visible(`#approval-result .error`))
	assert.Contains(t, b.text(`#approval-result .error`), other.ID)
	assert.Contains(t, eval[string](b, `document.querySelector('#approval-result').innerHTML`), other.ID)
	assert.Contains(t, eval[string](b, `document.querySelector('#approval-result ul.moved').textContent`), other.ID)
	mustStatus(t, awaitClosed(t, h.client, stale.ID), model.ExecRejected)
	motd, err := os.ReadFile(filepath.Join(dir, "app", "motd"))
	require.NoError(t, err)
	assert.Equal(t, "other\n", string(motd), "a refused approval changed a file")

	// A plan that holds: approved with a comment, its apply followed.
	fresh := planForApproval(t, h.client, st.ID, filesPackage(dir, "v2\n"), 0)
	b.do(chromedp.Navigate(h.url+"/ui/executions/"+fresh.ID), visible(`#approval #approve`))
	assert.Equal(t, "update 1 · noop 2", b.text(`#approval-summary`))
	assert.Contains(t, b.text(`#approval .plan-steps`), "update file/motd\nPath\tOld\tNew\ncontent\t{sha256}")
	assert.NotContains(t, b.text(`#approval .plan-steps`), "file/conf", "unchanged steps are not listed")
	b.do(chromedp.SendKeys(chromedp.CSS(`#approval-comment`), "ship <b>it</b>"))
	b.click(`#approve`)
	b.do(visible(`#approval a.apply-link`))
	applyID := b.text(`#approval a.apply-link`)
	assert.True(t, strings.HasPrefix(applyID, "stack-"+st.ID+"."), applyID)
	assert.Contains(t, b.text(`#approval`), "alice")
	assert.Contains(t, b.text(`#approval`), "ship <b>it</b>", "the comment is shown as text")
	b.click(`#approval a.apply-link`)
	b.do(visible(`#status[data-status="completed"]`))
	assert.Contains(t, b.text(`#exec-id`), applyID)
	b.poll(`document.getElementById('counts').dataset.succeeded === '3'`, 10*time.Second)
	motd, err = os.ReadFile(filepath.Join(dir, "app", "motd"))
	require.NoError(t, err)
	assert.Equal(t, "v2\n", string(motd))

	// Back on the plan's page: approved by alice, linked to the apply.
	b.do(chromedp.Navigate(h.url+"/ui/executions/"+fresh.ID), visible(`#approval a.apply-link`))
	assert.Contains(t, b.text(`#approval .approval-status`), "approved")
	assert.Equal(t, applyID, b.text(`#approval a.apply-link`))
	assert.Empty(t, b.errs.all())
}
