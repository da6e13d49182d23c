package api

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

// The live page of an apply waiting under a four-eyes policy says how many
// approvals were given of those required, the author and who may
// approve; its author is offered Reject only; an approval from the page
// is counted and shown.
func TestE2ELivePageFourEyes(t *testing.T) {
	f := newFourEyes(t, cairnOptions{})
	ctx := ctxTimeout(t, 2*time.Minute)
	st, err := f.client.CreateStack(ctx, model.StackInput{Name: "four-eyes-page"})
	require.NoError(t, err)
	_, err = f.client.SetApprovals(ctx, client.StackApprovals, st.ID, model.ApprovalPolicy{Required: 2})
	require.NoError(t, err)
	ex, err := f.dev.Apply(ctx, st.ID, &client.Document{Data: []byte(filesPackage(t.TempDir(), "x\n")), Format: "yaml"}, client.ApplyOptions{})
	require.NoError(t, err)
	require.Equal(t, model.ExecWaiting, ex.Status, "error %q", ex.Error)

	// Its author sees Reject, and no Approve.
	d := newBrowserTab(t, ctx)
	d.do(chromedp.Navigate(f.url+"/ui/executions/"+ex.ID), visible(`#message.error`),
		chromedp.SendKeys(chromedp.CSS(`#token`), f.tokens["dev"]), chromedp.Click(chromedp.CSS(`#token-form button[type=submit]`)),
		visible(`#approval #reject`), visible(`#approval-author-only`))
	assert.Zero(t, eval[int](d, `document.querySelectorAll('#approval #approve').length`), "the author is offered Approve")

	b := newBrowserTab(t, ctx)
	b.do(chromedp.Navigate(f.url+"/ui/executions/"+ex.ID), visible(`#message.error`),
		chromedp.SendKeys(chromedp.CSS(`#token`), f.tokens["ann"]), chromedp.Click(chromedp.CSS(`#token-form button[type=submit]`)),
		visible(`#approval #approve`))
	assert.Equal(t, "Approvals: 0 of 2", b.text(`#approval-count`))
	assert.Equal(t, "Author: dev (may not approve)", b.text(`#approval-author`))
	assert.Equal(t, "May approve: ann, bob (principals with approver on stack "+st.ID+")", b.text(`#approval-who`))

	b.click(`#approve`)
	b.poll(`(document.getElementById('approval-count') || {}).textContent === 'Approvals: 1 of 2'`, 30*time.Second)
	assert.Contains(t, b.text(`#approval ul.approvals`), "ann")
	assert.Empty(t, b.errs.all())
}
