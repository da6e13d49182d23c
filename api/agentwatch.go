package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/internal/agentapi"
)

// AgentWatches is the server's watcher as agents reach it: the paths
// their node watches for the stacks whose drift settings say watch, and
// the changes they saw there.
type AgentWatches interface {
	// NodeWatchList answers the node's list, waiting while since is its
	// current version (agentapi.PathWatch).
	NodeWatchList(ctx context.Context, cluster, node, since string) (*agentapi.WatchList, error)
	// NodeWatchEvents checks the node's resources at the changed paths
	// and returns how many it marked.
	NodeWatchEvents(cluster, node string, ev agentapi.WatchEvents) int
}

func (s *server) registerAgentWatch(e *echo.Echo) {
	e.Add(http.MethodGet, agentapi.PathWatch, s.agentWatchList, s.nodeAuth)
	e.Add(http.MethodPost, agentapi.PathWatchEvents, s.agentWatchEvents, s.nodeAuth)
}

// agentWatchList answers what the token's node watches (a long poll:
// see agentapi.PathWatch).
func (s *server) agentWatchList(c echo.Context) error {
	if s.agentWatch == nil {
		return newError(http.StatusServiceUnavailable, "this server does not watch")
	}
	id := agentOf(c)
	l, err := s.agentWatch.NodeWatchList(c.Request().Context(), id.cluster, id.node, c.QueryParam("since"))
	if err != nil {
		// The agent went away while it waited: no one reads an answer.
		return nil
	}
	return c.JSON(http.StatusOK, l)
}

// agentWatchEvents takes what the token's node saw change: a body of at
// most agentapi.MaxWatchEventsBytes and agentapi.MaxWatchPaths paths,
// unknown fields refused; paths the node does not watch are ignored.
func (s *server) agentWatchEvents(c echo.Context) error {
	if s.agentWatch == nil {
		return newError(http.StatusServiceUnavailable, "this server does not watch")
	}
	id := agentOf(c)
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, agentapi.MaxWatchEventsBytes+1))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return newError(http.StatusRequestEntityTooLarge, "request body exceeds %d bytes", tooLarge.Limit)
		}
		return badRequest("body: %v", err)
	}
	if len(body) > agentapi.MaxWatchEventsBytes {
		return newError(http.StatusRequestEntityTooLarge, "watch events exceed %d bytes", agentapi.MaxWatchEventsBytes)
	}
	var ev agentapi.WatchEvents
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ev); err != nil {
		return badRequest("watch events: %v", err)
	}
	if n := len(ev.Paths) + len(ev.Units); n > agentapi.MaxWatchPaths {
		return badRequest("watch events: %d paths and units, at most %d", n, agentapi.MaxWatchPaths)
	}
	marked := s.agentWatch.NodeWatchEvents(id.cluster, id.node, ev)
	requestLogger(c, s.log).Debug("watch events from an agent", "cluster", id.cluster, "node", id.node,
		"paths", len(ev.Paths), "units", len(ev.Units), "overflow", ev.Overflow, "resources", marked)
	return c.NoContent(http.StatusNoContent)
}
