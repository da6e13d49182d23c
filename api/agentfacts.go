package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/internal/agentapi"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

func (s *server) registerAgentFacts(e *echo.Echo) {
	e.Add(http.MethodPost, agentapi.PathFacts, s.agentPutFacts, s.nodeAuth)
}

// agentPutFacts keeps the facts the token's node reports of its host
// (model.NodeFacts): a body of at most model.MaxFactsBytes, unknown
// fields refused, every field checked by Validate; the time is the
// server's. 204, or 400 with the first field at fault.
func (s *server) agentPutFacts(c echo.Context) error {
	id := agentOf(c)
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, model.MaxFactsBytes+1))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return newError(http.StatusRequestEntityTooLarge, "request body exceeds %d bytes", tooLarge.Limit)
		}
		return badRequest("body: %v", err)
	}
	if len(body) > model.MaxFactsBytes {
		return newError(http.StatusRequestEntityTooLarge, "facts exceed %d bytes", model.MaxFactsBytes)
	}
	var f model.NodeFacts
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return badRequest("facts: %v", err)
	}
	if err := f.Validate(); err != nil {
		return badRequest("facts: %v", err)
	}
	f.ReportedAt = time.Now().UTC().Truncate(time.Second)
	if err := s.store.SetNodeFacts(c.Request().Context(), id.cluster, id.node, &f); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return newError(http.StatusForbidden, "node %q of cluster %q is not an agent node", id.node, id.cluster)
		}
		return internalError(err)
	}
	requestLogger(c, s.log).Info("node facts reported", "cluster", id.cluster, "node", id.node,
		"hostname", f.Hostname, "os", f.OS.ID+" "+f.OS.VersionID, "bootId", f.BootID)
	return c.NoContent(http.StatusNoContent)
}
