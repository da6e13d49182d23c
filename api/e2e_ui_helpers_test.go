package api

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/internal/testenv"
)

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

// browserTab is one headless Chromium tab (/usr/bin/chromium, or as
// CAIRN_REQUIRE_ALL demands) with what the live page tests ask of it.
type browserTab struct {
	t    *testing.T
	ctx  context.Context
	errs browserErrors
}

func newBrowserTab(t *testing.T, ctx context.Context) *browserTab {
	t.Helper()
	chromium := testenv.Program(t, "chromium")
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.WindowSize(1400, 900),
		chromedp.UserDataDir(t.TempDir()))...)
	t.Cleanup(cancelAlloc)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	b := &browserTab{t: t, ctx: browser}
	b.errs.listen(browser)
	_, err := chromedp.Call(browser, log.Enable, cdp.Empty{})
	require.NoError(t, err)
	return b
}

// do runs actions, failing the test with what the page shows when they do
// not succeed within 40 s.
func (b *browserTab) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	stepCtx, cancel := context.WithTimeout(b.ctx, 40*time.Second)
	defer cancel()
	if err := chromedp.Do(stepCtx, steps...); err != nil {
		page, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.body.innerText.slice(0, 4000)`))
		b.t.Fatalf("%v; the page shows:\n%s\nbrowser errors: %v", err, page, b.errs.all())
	}
}

// text is the visible text of the first element sel matches, waiting up
// to 10 s for one. It is read in one step inside the page: the panels are
// redrawn as events come, so a node found by one query may be gone when a
// second asks for its text.
func (b *browserTab) text(sel string) string {
	b.t.Helper()
	quoted, err := json.Marshal(sel)
	require.NoError(b.t, err)
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%s); return e ? e.innerText : null; })()`, quoted)
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, err := chromedp.Run(b.ctx, chromedp.Evaluate[*string](js))
		require.NoError(b.t, err, sel)
		if v != nil {
			return *v
		}
		require.True(b.t, time.Now().Before(deadline), "no element %s", sel)
		time.Sleep(50 * time.Millisecond)
	}
}

func (b *browserTab) attr(sel, name string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.AttributeValue(chromedp.CSS(sel), name))
	require.NoError(b.t, err)
	return v.Value
}

// eval evaluates a JavaScript expression in the page into T.
func eval[T any](b *browserTab, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	require.NoError(b.t, err, expr)
	return v
}

// click clicks the first element sel matches, once it is there, in one
// step inside the page (a panel redrawn between a query and a click would
// leave the click a node that is gone).
func (b *browserTab) click(sel string) {
	b.t.Helper()
	quoted, err := json.Marshal(sel)
	require.NoError(b.t, err)
	b.poll(fmt.Sprintf(`(() => { const e = document.querySelector(%s); if (!e) return false; e.click(); return true; })()`, quoted), 10*time.Second)
}

// poll waits until a JavaScript expression is true in the page.
func (b *browserTab) poll(expr string, timeout time.Duration) {
	b.t.Helper()
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(timeout))); err != nil {
		page, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.body.innerText.slice(0, 4000)`))
		b.t.Fatalf("%s: %v; the page shows:\n%s\nbrowser errors: %v", expr, err, page, b.errs.all())
	}
}

func visible(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(chromedp.CSS(sel))
}

// clickBox clicks the graph's box of cytoscape element id on the canvas
// itself: its rendered position (window.cairnCy) within the graph's
// container.
func (b *browserTab) clickBox(id string) {
	b.t.Helper()
	// The view settles (no animation) before the position is read.
	b.poll(`window.cairnCy && !window.cairnCy.animated() && window.cairnCy.getElementById(`+jsString(id)+`).length === 1`, 10*time.Second)
	at := eval[[]float64](b, `(() => {
		const n = window.cairnCy.getElementById(`+jsString(id)+`);
		const p = n.renderedPosition();
		const r = document.getElementById('graph').getBoundingClientRect();
		return [r.left + p.x, r.top + p.y];
	})()`)
	require.Len(b.t, at, 2)
	b.do(chromedp.MouseClickXY(at[0], at[1]))
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	return fmt.Sprintf("%q", s)
}
