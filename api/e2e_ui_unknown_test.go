package api

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// lostOutcome is a store that fails the first write of one step's
// outputs: the command ran, its outcome was not recorded.
type lostOutcome struct {
	store.Store
	step string
	once sync.Once
}

func (s *lostOutcome) PutStepDataBatch(ctx context.Context, execID, kind string, data map[string][]byte) error {
	if _, ok := data[s.step]; ok && kind == contract.DataOutputs {
		lost := false
		s.once.Do(func() { lost = true })
		if lost {
			return errors.New("the database went away")
		}
	}
	return s.Store.PutStepDataBatch(ctx, execID, kind, data)
}

// TestE2ELivePageUnknownStep: a command whose outcome could not be
// recorded is not run again by the retried attempt: the live page shows
// it unknown, says what that means beside the decisions, and a skip from
// the page takes it as done, without running it, and the apply completes.
func TestE2ELivePageUnknownStep(t *testing.T) {
	h := newCairn(t, cairnOptions{steps: func(st store.Store) store.Store { return &lostOutcome{Store: st, step: "exec/migrate"} }})
	ctx := ctxTimeout(t, 90*time.Second)
	root := t.TempDir()
	runs := filepath.Join(root, "runs.log")
	docs := fmt.Sprintf("kind: Exec\nmetadata: {name: migrate}\nspec: {command: \"echo ran >> %s\"}\n", runs)
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "live-unknown"})
	require.NoError(t, err)
	ex, err := h.client.Apply(ctx, st.ID, &client.Document{Data: []byte(docs), Format: "yaml"}, client.ApplyOptions{})
	require.NoError(t, err)

	b := newBrowserTab(t, ctx)
	b.do(chromedp.Navigate(h.url+"/ui/executions/"+ex.ID), visible(`#message.error`),
		chromedp.SendKeys(chromedp.CSS(`#token`), h.token), chromedp.Click(chromedp.CSS(`#token-form button[type=submit]`)),
		visible(`#status[data-status="waiting"]`), visible(`#waiting button.step-link`))
	assert.Equal(t, "exec/migrate", b.attr(`#waiting button.step-link`, "data-step"))
	b.poll(`document.getElementById('counts').dataset.unknown === '1'`, 10*time.Second)
	b.click(`#waiting button.step-link`)
	b.do(visible(`#detail p.unknown-note`), visible(`#detail button.decision[data-action="skip"]`))
	assert.Contains(t, b.text(`#detail p.unknown-note`), "unknown: the command may or may not have run")
	assert.Equal(t, "unknown", b.text(`#detail dl dd`))
	got, err := os.ReadFile(runs)
	require.NoError(t, err)
	require.Equal(t, "ran\n", string(got), "the retried attempt ran the command again")

	b.click(`#detail button.decision[data-action="skip"]`)
	b.do(visible(`#status[data-status="completed"]`))
	final, err := h.client.GetExecution(ctx, ex.ID)
	require.NoError(t, err)
	mustStatus(t, final, model.ExecCompleted)
	require.NotNil(t, final.Report)
	assert.Equal(t, 1, final.Report.Updated, "taken as done")
	got, err = os.ReadFile(runs)
	require.NoError(t, err)
	assert.Equal(t, "ran\n", string(got))
	assert.Empty(t, b.errs.all())
}
