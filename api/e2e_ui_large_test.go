package api

import (
	"encoding/json"
	"fmt"
	"net/http"
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

// gatedPackage is steps steps: an exec that runs until flag exists, and
// steps-1 files in dir, each after it.
func gatedPackage(dir string, steps int, flag string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "kind: Exec\nmetadata: {name: gate}\nspec: {command: %q}\nmeta: {timeout: 120}\n",
		"while [ ! -f "+flag+" ]; do sleep 0.05; done")
	for i := range steps - 1 {
		fmt.Fprintf(&b, "---\nkind: File\nmetadata: {name: f%05d}\nspec: {path: %s/f%05d, content: \"x\\n\"}\ndependsOn: [Exec/gate]\n", i, dir, i)
	}
	return b.String()
}

// TestE2ELivePageLarge opens the live page of executions of 1,000 and
// 10,000 steps while they run (a gate holds all but one step pending):
// the page draws the collapsed view, groups whose counts by state add up
// to every step, and logs how long its first drawing took; a click on a
// group's box on the canvas expands it into its steps; once the gate
// opens, every step is shown succeeded — the event stream follows the
// steps beyond the first page of progress — and GET .../steps pages
// through all of them.
func TestE2ELivePageLarge(t *testing.T) {
	h := newCairn(t, cairnOptions{cfg: func(c *Config) { c.EventsPollInterval = DefaultEventsPoll }})
	ctx := ctxTimeout(t, 3*time.Minute)
	b := newBrowserTab(t, ctx)
	b.do(chromedp.Navigate(h.url + "/ui/"))
	eval[bool](b, `sessionStorage.setItem('cairn.token', `+jsString(h.token)+`) === undefined`)

	for _, n := range []int{1000, 10000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			b.t = t
			dir := t.TempDir()
			flag := filepath.Join(dir, "open")
			st, err := h.client.CreateStack(ctx, model.StackInput{Name: fmt.Sprintf("large-%d", n)})
			require.NoError(t, err)
			ex, err := h.client.Apply(ctx, st.ID, &client.Document{Data: []byte(gatedPackage(dir, n, flag)), Format: "yaml"}, client.ApplyOptions{})
			require.NoError(t, err)

			// The page is opened once the execution planned its steps, so
			// the time measured is the page's own.
			waitUntil(t, "the execution's graph", func() bool {
				_, err := h.client.ExecutionGraph(ctx, ex.ID)
				return err == nil
			})
			b.do(chromedp.Navigate(h.url+"/ui/executions/"+ex.ID), chromedp.WaitReady(chromedp.CSS(`#graph[data-render-ms]`)))
			t.Logf("live page of %d steps: first drawing %s ms after navigation", n, b.attr(`#graph`, "data-render-ms"))

			// Collapsed: only group boxes, whose counts add up to every step.
			groups := eval[[]struct {
				ID     string         `json:"id"`
				Size   int            `json:"size"`
				Counts map[string]int `json:"counts"`
			}](b, `window.cairnCy.nodes('.group').map((g) => ({ id: g.id(), size: g.data('size'), counts: g.data('counts') }))`)
			require.NotEmpty(t, groups)
			assert.Zero(t, eval[int](b, `window.cairnCy.nodes('[step]').length`), "a large execution starts collapsed")
			total, biggest := 0, groups[0]
			for _, g := range groups {
				sum := 0
				for _, c := range g.Counts {
					sum += c
				}
				assert.Equal(t, g.Size, sum, "counts of %s", g.ID)
				total += g.Size
				if g.Size > biggest.Size {
					biggest = g
				}
			}
			assert.Equal(t, n, total)
			assert.Equal(t, n, eval[int](b, `Object.values(document.getElementById('counts').dataset).reduce((a, v) => a + Number(v), 0)`))

			// A click on a group's box expands it into its steps.
			b.clickBox(biggest.ID)
			b.poll(fmt.Sprintf(`window.cairnCy.nodes('[step]').length === %d`, biggest.Size), 10*time.Second)
			assert.Zero(t, eval[int](b, `window.cairnCy.getElementById(`+jsString(biggest.ID)+`).length`))

			// The gate opens: every step, on every page, ends succeeded.
			require.NoError(t, os.WriteFile(flag, nil, 0o644))
			b.do(visible(`#status[data-status="completed"]`))
			b.poll(fmt.Sprintf(`document.getElementById('counts').dataset.succeeded === '%d'`, n), 20*time.Second)
			assert.True(t, eval[bool](b, `window.cairnCy.nodes().every((x) => x.data('state') === 'succeeded')`))

			// The pages of GET .../steps hold every step once.
			seen := map[string]model.Status{}
			for offset, entries := 0, 1; offset < entries; {
				var page model.ExecutionSteps
				getJSON(t, h, fmt.Sprintf("/v1/executions/%s/steps?offset=%d&limit=3000", ex.ID, offset), http.StatusOK, &page)
				require.NotEmpty(t, page.Steps)
				for _, s := range page.Steps {
					seen[s.ID] = s.Status
				}
				offset, entries = offset+len(page.Steps), page.Entries
			}
			assert.Len(t, seen, n)
			for id, s := range seen {
				require.Equal(t, model.StatusSucceeded, s, id)
			}
		})
	}
	t.Run("bad paging", func(t *testing.T) {
		var body map[string]any
		getJSON(t, h, "/v1/executions/x/steps?limit=0&offset=-1", http.StatusBadRequest, &body)
		assert.Contains(t, fmt.Sprint(body), "limit")
		assert.Contains(t, fmt.Sprint(body), "offset")
	})
	assert.Empty(t, b.errs.all())
}

// getJSON GETs path from the API with the token and decodes its answer.
func getJSON(t *testing.T, h *cairn, path string, want int, out any) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxTimeout(t, time.Minute), http.MethodGet, h.url+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+h.token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, want, resp.StatusCode, path)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(out))
}

// TestE2ELivePageWhenTheStreamIsRefused opens the live page of a running
// execution whose event stream the server refuses (its one client slot is
// taken): the page says it polls, asks GET .../steps?since= for what
// changed, and once the gate opens shows every step succeeded and the
// execution completed.
func TestE2ELivePageWhenTheStreamIsRefused(t *testing.T) {
	const n = 300
	h := newCairn(t, cairnOptions{cfg: func(c *Config) { c.EventsMaxClients = 1 }})
	ctx := ctxTimeout(t, 2*time.Minute)
	dir := t.TempDir()
	flag := filepath.Join(dir, "open")
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "refused"})
	require.NoError(t, err)
	ex, err := h.client.Apply(ctx, st.ID, &client.Document{Data: []byte(gatedPackage(dir, n, flag)), Format: "yaml"}, client.ApplyOptions{})
	require.NoError(t, err)
	waitUntil(t, "the execution's graph", func() bool {
		_, err := h.client.ExecutionGraph(ctx, ex.ID)
		return err == nil
	})
	keeper := watch(ctx, h.client, ex.ID, "")
	waitUntil(t, "the keeper's steps", func() bool { return keeper.count("") == n })

	b := newBrowserTab(t, ctx)
	b.do(chromedp.Navigate(h.url + "/ui/"))
	eval[bool](b, `sessionStorage.setItem('cairn.token', `+jsString(h.token)+`) === undefined`)
	b.do(chromedp.Navigate(h.url+"/ui/executions/"+ex.ID), chromedp.WaitReady(chromedp.CSS(`#graph[data-render-ms]`)))
	b.poll(`document.getElementById('live').textContent === 'polling'`, 20*time.Second)
	assert.Contains(t, b.text(`#message`), "too many clients")

	require.NoError(t, os.WriteFile(flag, nil, 0o644))
	b.do(visible(`#status[data-status="completed"]`))
	b.poll(fmt.Sprintf(`document.getElementById('counts').dataset.succeeded === '%d'`, n), 20*time.Second)
	assert.True(t, eval[bool](b, `window.cairnCy.nodes().every((x) => x.data('state') === 'succeeded')`))
	<-keeper.ended
	assert.Empty(t, b.errs.all())
}
