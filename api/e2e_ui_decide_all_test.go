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

// TestE2ELivePageDecidesAll pauses an apply on three failed steps; the
// live page offers "retry all 3" beside the waiting steps, and one click
// (once the cause is fixed) retries them together: the page says
// completed.
func TestE2ELivePageDecidesAll(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 90*time.Second)
	flag := filepath.Join(t.TempDir(), "fixed")
	var docs strings.Builder
	for _, n := range []string{"a", "b", "c"} {
		fmt.Fprintf(&docs, "---\nkind: Exec\nmetadata: {name: %s}\nspec: {command: \"test -f %s\"}\nmeta: {timeout: 60}\n", n, flag)
	}
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "live-all"})
	require.NoError(t, err)
	ex, err := h.client.Apply(ctx, st.ID, &client.Document{Data: []byte(docs.String()), Format: "yaml"}, client.ApplyOptions{OnFailure: model.OnFailurePause})
	require.NoError(t, err)

	b := newBrowserTab(t, ctx)
	b.do(chromedp.Navigate(h.url+"/ui/executions/"+ex.ID), visible(`#message.error`),
		chromedp.SendKeys(chromedp.CSS(`#token`), h.token), chromedp.Click(chromedp.CSS(`#token-form button[type=submit]`)),
		visible(`#status[data-status="waiting"]`))
	b.poll(`document.querySelectorAll('#waiting button.step-link').length === 3`, 30*time.Second)
	b.do(visible(`#waiting button.decide-all[data-action="retry"]`))
	assert.Equal(t, "retry all 3", b.text(`#waiting button.decide-all[data-action="retry"]`))
	assert.Equal(t, "skip all 3", b.text(`#waiting button.decide-all[data-action="skip"]`))

	require.NoError(t, os.WriteFile(flag, nil, 0o644))
	b.click(`#waiting button.decide-all[data-action="retry"]`)
	b.do(visible(`#status[data-status="completed"]`))
	assert.Contains(t, b.text(`#message`), "retry sent for 3 steps")
	final, err := h.client.GetExecution(ctx, ex.ID)
	require.NoError(t, err)
	mustStatus(t, final, model.ExecCompleted)
	assert.Empty(t, b.errs.all())
}
