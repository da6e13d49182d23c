package api

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/internal/agentapi"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// Node tokens, behind the API token: issue (POST .../token, replacing any
// token the node had), rotate (POST .../token/rotate, the same for a node
// that has one: the old token is refused from the moment the new one is
// stored) and revoke (DELETE .../token: refused at once, since every
// agent request reads the stored hash). Only the token's SHA-256 is kept;
// the token itself is in the one answer that issues it.

func (s *server) registerNodeTokens(e *echo.Echo) {
	e.Add(http.MethodPost, "/v1/clusters/:id/nodes/:node/token/rotate", s.rotateNodeToken)
	e.Add(http.MethodDelete, "/v1/clusters/:id/nodes/:node/token", s.revokeNodeToken)
}

// issueNodeToken issues a new token for an agent node, replacing (and so
// revoking) the one it had.
func (s *server) issueNodeToken(c echo.Context) error {
	return s.newNodeToken(c, false)
}

// rotateNodeToken replaces the token of an agent node that has one; a
// node never enrolled is 404, so a rotation cannot enrol one by mistake.
func (s *server) rotateNodeToken(c echo.Context) error {
	return s.newNodeToken(c, true)
}

// newNodeToken stores the hash of a new token for the request's agent
// node and answers the token with the fingerprint of the server's
// certificate, which the agent pins.
func (s *server) newNodeToken(c echo.Context, rotate bool) error {
	ctx := c.Request().Context()
	cl, n, err := s.agentNodeOf(c)
	if err != nil {
		return err
	}
	if rotate {
		if _, err := s.store.NodeTokenHash(ctx, cl.ID, n.ID); errors.Is(err, store.ErrNotFound) {
			return notFound("node %q of cluster %q has no token to rotate; issue one with POST /v1/clusters/%s/nodes/%s/token", n.ID, cl.ID, cl.ID, n.ID)
		} else if err != nil {
			return internalError(err)
		}
	}
	token, err := agentapi.NewToken(cl.ID, n.ID)
	if err != nil {
		return internalError(err)
	}
	if err := s.store.SetNodeTokenHash(ctx, cl.ID, n.ID, agentapi.Hash(token)); err != nil {
		return storeError(err, "agent node")
	}
	what := "node token issued"
	if rotate {
		what = "node token rotated"
	}
	requestLogger(c, s.log).Info(what, "cluster", cl.ID, "node", n.ID)
	return c.JSON(http.StatusCreated, model.NodeToken{Cluster: cl.ID, Node: n.ID, Token: token, ServerFingerprint: s.cfg.TLSFingerprint})
}

// revokeNodeToken deletes an agent node's token: 204, or 404 when it had
// none.
func (s *server) revokeNodeToken(c echo.Context) error {
	cl, n, err := s.agentNodeOf(c)
	if err != nil {
		return err
	}
	if err := s.store.DeleteNodeTokenHash(c.Request().Context(), cl.ID, n.ID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return notFound("node %q of cluster %q has no token", n.ID, cl.ID)
		}
		return internalError(err)
	}
	requestLogger(c, s.log).Info("node token revoked", "cluster", cl.ID, "node", n.ID)
	return c.NoContent(http.StatusNoContent)
}

// agentNodeOf is the cluster and agent node the route's :id and :node
// name: 404 when either is missing, 409 for a local node.
func (s *server) agentNodeOf(c echo.Context) (*model.Cluster, *model.Node, error) {
	clusterID, nodeID := c.Param("id"), c.Param("node")
	cl, err := s.store.GetCluster(c.Request().Context(), clusterID)
	if err != nil {
		return nil, nil, storeError(err, "cluster")
	}
	n := nodeByID(cl, nodeID)
	if n == nil {
		return nil, nil, notFound("cluster %q has no node %q", clusterID, nodeID)
	}
	if n.Mode != model.NodeAgent {
		return nil, nil, conflict("node %q of cluster %q is a local node, served by the server itself; set its mode to %q to serve it with an agent", nodeID, clusterID, model.NodeAgent)
	}
	return cl, n, nil
}
