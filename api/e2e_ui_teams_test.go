package api

import (
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

// TestE2ELivePageHidesWhatTheTokenMayNot opens a plan awaiting approval
// with a viewer's token: the page shows the plan without Approve and
// Reject, and the API refuses the approval anyway; an approver's token on
// the same stack gets the buttons.
func TestE2ELivePageHidesWhatTheTokenMayNot(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 2*time.Minute)
	dir := t.TempDir()
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "hidden-buttons"})
	require.NoError(t, err)
	plan := planForApproval(t, h.client, st.ID, filesPackage(dir, "planned\n"), 0)

	_, err = h.client.CreatePrincipal(ctx, model.PrincipalInput{Name: "watcher"})
	require.NoError(t, err)
	token := func(role model.Role) string {
		tk, err := h.client.CreateToken(ctx, model.TokenInput{Principal: "watcher", Roles: []model.Grant{{Role: role, Stacks: []string{st.ID}}}})
		require.NoError(t, err)
		return tk.Token
	}
	viewerTok, approverTok := token(model.RoleViewer), token(model.RoleApprover)

	b := newBrowserTab(t, ctx)
	b.do(chromedp.Navigate(h.url + "/ui/"))
	eval[bool](b, `sessionStorage.setItem('cairn.token', `+jsString(viewerTok)+`) === undefined`)
	b.do(chromedp.Navigate(h.url+"/ui/executions/"+plan.ID), visible(`#approval #approval-not-yours`))
	assert.Equal(t, 0, eval[int](b, `document.querySelectorAll('#approval button.decision').length`), "no Approve or Reject")
	assert.NotEmpty(t, b.text(`#approval-summary`), "the plan is shown")

	viewer, err := client.New(h.url, viewerTok)
	require.NoError(t, err)
	_, err = viewer.Approve(ctx, plan.ID, "")
	require.Equal(t, http.StatusForbidden, apiStatus(err), "the API refuses it anyway: %v", err)

	eval[bool](b, `sessionStorage.setItem('cairn.token', `+jsString(approverTok)+`) === undefined`)
	b.do(chromedp.Navigate(h.url+"/ui/executions/"+plan.ID), visible(`#approval #approve`), visible(`#approval #reject`))
	assert.Empty(t, b.errs.all())
}
