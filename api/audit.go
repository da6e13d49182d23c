package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/internal/agentapi"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// Audit queue bounds: entries wait here to be written in batches; a
// request finding the queue full waits for room (none is dropped).
const (
	auditQueueSize = 1024
	auditBatchMax  = 256
	auditAttempts  = 5
	auditWriteWait = 10 * time.Second
)

// auditor appends audit entries to the store from one goroutine, in
// batches, so a request pays a channel send rather than a write. close
// writes what is queued and stops the goroutine; an entry added after it
// is written by its request.
type auditor struct {
	store store.Teams
	log   *slog.Logger
	queue chan auditItem
	// mu orders sends on queue before close: they hold it shared, close
	// exclusively while it sets closed and closes stop, so nothing is
	// queued after run has drained the queue. done is closed once run
	// has returned.
	mu     sync.RWMutex
	closed bool
	stop   chan struct{}
	done   chan struct{}
}

// auditItem is an entry to write, or (flushed set) a marker closed once
// every entry queued before it is written.
type auditItem struct {
	entry   model.AuditEntry
	flushed chan struct{}
}

func newAuditor(st store.Teams, log *slog.Logger) *auditor {
	a := &auditor{store: st, log: log, queue: make(chan auditItem, auditQueueSize),
		stop: make(chan struct{}), done: make(chan struct{})}
	go a.run()
	return a
}

// add queues e, waiting while the queue is full; once the auditor is
// closed it writes e itself.
func (a *auditor) add(e model.AuditEntry) {
	a.mu.RLock()
	if a.closed {
		a.mu.RUnlock()
		a.write([]model.AuditEntry{e})
		return
	}
	a.queue <- auditItem{entry: e}
	a.mu.RUnlock()
}

// close writes every entry queued so far and stops the writer, or gives
// up waiting when ctx ends (the writer still finishes the queue).
func (a *auditor) close(ctx context.Context) error {
	a.mu.Lock()
	if !a.closed {
		a.closed = true
		close(a.stop)
	}
	a.mu.Unlock()
	select {
	case <-a.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("audit entries still being written: %w", context.Cause(ctx))
	}
}

// flush waits until every entry queued so far is written (or ctx ends).
func (a *auditor) flush(ctx context.Context) {
	done := make(chan struct{})
	a.mu.RLock()
	if a.closed {
		a.mu.RUnlock()
		// close drains the queue; entries after it are written by their
		// requests.
		select {
		case <-a.done:
		case <-ctx.Done():
		}
		return
	}
	select {
	case a.queue <- auditItem{flushed: done}:
	case <-ctx.Done():
		a.mu.RUnlock()
		return
	}
	a.mu.RUnlock()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

func (a *auditor) run() {
	defer close(a.done)
	for {
		select {
		case it := <-a.queue:
			a.writeItems(a.gather(it))
		case <-a.stop:
			// What requests queued before the stop is written; a request
			// after it writes its own entry.
			for {
				select {
				case it := <-a.queue:
					a.writeItems(a.gather(it))
				default:
					return
				}
			}
		}
	}
}

// gather takes first and what else is queued, up to a batch.
func (a *auditor) gather(first auditItem) []auditItem {
	items := []auditItem{first}
	for len(items) < auditBatchMax {
		select {
		case it := <-a.queue:
			items = append(items, it)
		default:
			return items
		}
	}
	return items
}

// writeItems writes the entries among items, then closes their flush
// markers.
func (a *auditor) writeItems(items []auditItem) {
	var batch []model.AuditEntry
	for _, it := range items {
		if it.flushed == nil {
			batch = append(batch, it.entry)
		}
	}
	a.write(batch)
	for _, it := range items {
		if it.flushed != nil {
			close(it.flushed)
		}
	}
}

// write appends a batch, retrying; a batch that cannot be written is
// logged as an error with every request id it held.
func (a *auditor) write(batch []model.AuditEntry) {
	if len(batch) == 0 {
		return
	}
	var err error
	for attempt := range auditAttempts {
		ctx, cancel := context.WithTimeout(context.Background(), auditWriteWait)
		err = a.store.AppendAudit(ctx, batch)
		cancel()
		if err == nil {
			return
		}
		time.Sleep(time.Duration(100<<attempt) * time.Millisecond)
	}
	ids := make([]string, len(batch))
	for i, e := range batch {
		ids[i] = e.RequestID
	}
	a.log.Error("audit entries not recorded", "count", len(batch), "request_ids", ids, "error", err)
}

// auditTargetKey holds the request's *auditTarget, filled by access.
const auditTargetKey = "cairn.auditTarget"

// auditTarget is what a request acts on, as far as its route says.
type auditTarget struct {
	stack, cluster, release, execution string
}

// setTarget records what the request acts on for its audit entry.
func setTarget(c echo.Context, kind model.ScopeKind, id string) {
	t, ok := c.Get(auditTargetKey).(*auditTarget)
	if !ok {
		return
	}
	switch kind {
	case model.ScopeStack:
		t.stack = id
	case model.ScopeCluster:
		t.cluster = id
	case model.ScopeRelease:
		t.release = id
	case "execution":
		t.execution = id
	}
}

// audited reports whether a request goes into the trail: every change
// (not GET, HEAD or OPTIONS) and every refusal (401, 403), but not the
// probes, the live pages' shell, the agent API (node tokens) or the
// codec endpoint, which change nothing of Cairn's.
func audited(c echo.Context, status int) bool {
	p := c.Request().URL.Path
	if openPaths[p] || strings.HasPrefix(p, agentapi.Prefix) || strings.HasPrefix(p, CodecPrefix) || (uiPath(p) && !strings.HasPrefix(p, "/v1/")) {
		return false
	}
	switch c.Request().Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return status == http.StatusUnauthorized || status == http.StatusForbidden
	}
	return true
}

// auditTrail appends an entry for every audited request once its answer
// is written (and before the handler returns, so a client that saw the
// answer finds it in GET /v1/audit).
func (s *server) auditTrail(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		t := &auditTarget{}
		c.Set(auditTargetKey, t)
		if err := next(c); err != nil {
			c.Error(err)
		}
		status := c.Response().Status
		if !audited(c, status) {
			return nil
		}
		if loc := c.Response().Header().Get(echo.HeaderLocation); loc != "" {
			if id, ok := strings.CutPrefix(loc, "/v1/executions/"); ok && t.execution == "" {
				t.execution = id
			}
			if id, ok := strings.CutPrefix(loc, "/v1/stacks/"); ok && t.stack == "" {
				t.stack = id
			}
		}
		e := model.AuditEntry{
			At: time.Now().UTC(), Method: c.Request().Method, Route: c.Path(), Path: c.Request().URL.Path,
			Stack: t.stack, Cluster: t.cluster, Release: t.release, Execution: t.execution,
			Status: status, RequestID: c.Response().Header().Get(RequestIDHeader),
		}
		if e.Route == "" {
			e.Route = "unmatched"
		}
		if id := identityOf(c); id != nil {
			e.Principal = id.name
		}
		if status >= 400 {
			e.Code = codeFor(status)
		}
		s.audit.add(e)
		return nil
	}
}

// listAudit answers GET /v1/audit: newest first, paged by ?before=.
// Admins everywhere read every entry; anyone else the entries on stacks
// and clusters they may view, and their own.
func (s *server) listAudit(c echo.Context) error {
	f := model.AuditFilter{
		Principal: c.QueryParam("principal"), Stack: c.QueryParam("stack"),
		Cluster: c.QueryParam("cluster"), Execution: c.QueryParam("execution"),
	}
	var details []model.ErrorDetail
	if v := c.QueryParam("since"); v != "" {
		at, err := parseSince(v, time.Now())
		if err != nil {
			details = append(details, model.ErrorDetail{Path: "since", Message: err.Error()})
		}
		f.Since = at
	}
	if v := c.QueryParam("limit"); v != "" {
		n, err := parseBounded(v, 1, store.MaxAuditPage)
		if err != nil {
			details = append(details, model.ErrorDetail{Path: "limit", Message: err.Error()})
		}
		f.Limit = n
	}
	if v := c.QueryParam("before"); v != "" {
		n, err := parseBounded(v, 1, 1<<62)
		if err != nil {
			details = append(details, model.ErrorDetail{Path: "before", Message: err.Error()})
		}
		f.Before = int64(n)
	}
	if len(details) > 0 {
		return &Error{Status: http.StatusBadRequest, Message: "invalid query", Details: details}
	}
	if f.Limit == 0 {
		f.Limit = 100
	}
	ctx := c.Request().Context()
	wait, cancel := context.WithTimeout(ctx, 5*time.Second)
	s.audit.flush(wait)
	cancel()
	list, err := s.store.ListAudit(ctx, f)
	if err != nil {
		return internalError(err)
	}
	out := model.AuditList{Entries: []model.AuditEntry{}}
	if len(list) == f.Limit {
		out.Next = list[len(list)-1].ID
	}
	id := identityOf(c)
	all, _ := s.holds(ctx, id, model.RoleAdmin, "", "")
	var stacks, clusters func(string) bool
	if !all {
		if stacks, err = s.visibleFilter(c, model.ScopeStack); err != nil {
			return err
		}
		if clusters, err = s.visibleFilter(c, model.ScopeCluster); err != nil {
			return err
		}
	}
	for _, e := range list {
		if all || (id.name != "" && e.Principal == id.name) || (e.Stack != "" && stacks(e.Stack)) || (e.Cluster != "" && clusters(e.Cluster)) {
			out.Entries = append(out.Entries, e)
		}
	}
	return c.JSON(http.StatusOK, out)
}
