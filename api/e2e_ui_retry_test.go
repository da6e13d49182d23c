package api

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

// TestE2ELivePageRetriesAFailedLoad: a first load that fails on the
// server's side (here the execution's graph, twice, with 500) is tried
// again until the page draws; a refusal (404 for an execution that does
// not exist) is said once and not tried again.
func TestE2ELivePageRetriesAFailedLoad(t *testing.T) {
	h := newCairn(t, cairnOptions{})
	ctx := ctxTimeout(t, 2*time.Minute)
	st, err := h.client.CreateStack(ctx, model.StackInput{Name: "retry"})
	require.NoError(t, err)
	dir := t.TempDir()
	ex := h.applyWait(st.ID, fmt.Sprintf("kind: File\nmetadata: {name: a}\nspec: {path: %s, content: \"a\\n\"}\n", filepath.Join(dir, "a")), client.ApplyOptions{})

	target, err := url.Parse(h.url)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var graphAsked, missingAsked atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/executions/" + ex.ID + "/graph":
			if graphAsked.Add(1) <= 2 {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = w.Write([]byte(`{"error": {"code": "internal", "message": "context deadline exceeded"}}`))
				return
			}
		case "/v1/executions/apply-none":
			missingAsked.Add(1)
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)

	b := newBrowserTab(t, ctx)
	b.do(chromedp.Navigate(front.URL + "/ui/"))
	eval[bool](b, `sessionStorage.setItem('cairn.token', `+jsString(h.token)+`) === undefined`)
	b.do(chromedp.Navigate(front.URL+"/ui/executions/"+ex.ID), chromedp.WaitReady(chromedp.CSS(`#graph[data-render-ms]`)))
	require.EqualValues(t, 3, graphAsked.Load(), "two failed loads, then the one that drew")
	require.Empty(t, b.errs.all())

	b.do(chromedp.Navigate(front.URL + "/ui/executions/apply-none"))
	b.poll(`document.getElementById('message').textContent.length > 0`, 10*time.Second)
	time.Sleep(2500 * time.Millisecond) // longer than the first two waits between tries
	require.EqualValues(t, 1, missingAsked.Load(), "a missing execution is asked for once")
	require.NotContains(t, b.text(`#message`), "trying again")
}
