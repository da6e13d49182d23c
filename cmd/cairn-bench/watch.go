package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// watchCost measures what following a finished execution costs its user:
// `cairn exec show` of it (status, every step, the report) and, when
// chromium is on PATH, the live page's first drawing (the page marks it on
// #graph as data-render-ms, measured from navigation). Outside the phase's
// wall time; what fails is said in the note, not fatal to the run.
func (r *runner) watchCost(ctx context.Context, e *env, id string) string {
	var notes []string
	t0 := time.Now()
	cmd := exec.CommandContext(ctx, r.opts.cairnBin, "exec", "show", id)
	cmd.Env = serverEnv(map[string]string{"CAIRN_SERVER": e.apiURL})
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		notes = append(notes, fmt.Sprintf("`cairn exec show` failed: %v: %s", err, strings.TrimSpace(errOut.String())))
	} else {
		notes = append(notes, fmt.Sprintf("`cairn exec show` %s (%d lines)", time.Since(t0).Round(time.Millisecond), strings.Count(out.String(), "\n")))
	}
	ms, err := firstDrawing(ctx, e.apiURL+"/ui/executions/"+id)
	switch {
	case errors.Is(err, errNoBrowser):
	case err != nil:
		notes = append(notes, fmt.Sprintf("live page: %v", err))
	default:
		notes = append(notes, fmt.Sprintf("live page drawn %s ms after navigation", ms))
	}
	r.logf("  watching %s: %s", id, strings.Join(notes, "; "))
	return strings.Join(notes, "; ")
}

var errNoBrowser = errors.New("chromium is not on PATH")

// firstDrawing opens url in a headless chromium and returns the page's
// own measure of its first drawing.
func firstDrawing(ctx context.Context, url string) (string, error) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		return "", errNoBrowser
	}
	dir, err := os.MkdirTemp("", "cairn-bench-chromium-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.WindowSize(1400, 900), chromedp.UserDataDir(dir))...)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()
	if err := chromedp.Do(browser, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS(`#graph[data-render-ms]`))); err != nil {
		return "", fmt.Errorf("first drawing: %w", err)
	}
	v, err := chromedp.Run(browser, chromedp.AttributeValue(chromedp.CSS(`#graph`), "data-render-ms"))
	if err != nil {
		return "", err
	}
	return v.Value, nil
}
