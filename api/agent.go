package api

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/cairn-io/cairn/contract"
	"github.com/cairn-io/cairn/internal/agentapi"
	"github.com/cairn-io/cairn/model"
	"github.com/cairn-io/cairn/store"
)

// The agent API serves `cairn agent`, which holds no database credentials:
// each request presents a node token (agentapi.NewToken, issued by
// POST /v1/clusters/{id}/nodes/{node}/token and kept as a hash), and the
// answer covers only the step data the execution's grant gives that node
// (contract.NodeGrant): the records of its own steps and units, the
// outputs of the steps they depend on, and of the execution's parameters
// the env refs and secrets its steps read by name with every variable
// (agentParams). Anything else is 403, whether or not it exists.

const agentNodeKey = "cairn.agent.node"

// agentIdentity is the node a request's token belongs to.
type agentIdentity struct{ cluster, node string }

// agentReads says, per kind, which keys a node may read.
var agentReads = map[string]func(g *grantSet, key string) bool{
	contract.DataStep:        func(g *grantSet, k string) bool { return g.steps[k] },
	contract.DataUnit:        func(g *grantSet, k string) bool { return g.units[k] },
	contract.DataBefore:      func(g *grantSet, k string) bool { return g.steps[k] },
	contract.DataPlan:        func(g *grantSet, k string) bool { return g.steps[k] },
	contract.DataCompensated: func(g *grantSet, k string) bool { return g.steps[k] },
	contract.DataStarted:     func(g *grantSet, k string) bool { return g.steps[k] },
	contract.DataOutputs:     func(g *grantSet, k string) bool { return g.steps[k] || g.deps[k] },
	contract.DataParams:      func(g *grantSet, k string) bool { return k == contract.ParamsKey && len(g.steps) > 0 },
}

// agentWrites are the kinds a node may write, for its own steps only.
var agentWrites = map[string]bool{
	contract.DataBefore: true, contract.DataOutputs: true, contract.DataPlan: true, contract.DataCompensated: true,
	contract.DataStarted: true,
}

func (s *server) registerAgent(e *echo.Echo) {
	e.Add(http.MethodGet, agentapi.PathNode, s.agentNode, s.nodeAuth)
	e.Add(http.MethodGet, agentapi.PathData, s.agentGetData, s.nodeAuth)
	e.Add(http.MethodPost, agentapi.PathData, s.agentPutData, s.nodeAuth)
	e.Add(http.MethodPost, "/v1/clusters/:id/nodes/:node/token", s.issueNodeToken)
	s.registerNodeTokens(e)
	s.registerAgentFacts(e)
	s.registerAgentWatch(e)
}

// nodeAuth accepts a request whose bearer token is the current token of an
// agent node; every refusal says the same, so it tells nothing of which
// clusters and nodes exist.
func (s *server) nodeAuth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		refuse := newError(http.StatusUnauthorized, "missing or invalid node token")
		scheme, token, ok := strings.Cut(c.Request().Header.Get(echo.HeaderAuthorization), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return refuse
		}
		token = strings.TrimSpace(token)
		cluster, node, err := agentapi.ParseToken(token)
		if err != nil {
			return refuse
		}
		want, err := s.store.NodeTokenHash(c.Request().Context(), cluster, node)
		if errors.Is(err, store.ErrNotFound) {
			return refuse
		}
		if err != nil {
			return internalError(err)
		}
		if subtle.ConstantTimeCompare(agentapi.Hash(token), want) != 1 {
			return refuse
		}
		c.Set(agentNodeKey, agentIdentity{cluster: cluster, node: node})
		return next(c)
	}
}

func agentOf(c echo.Context) agentIdentity {
	id, _ := c.Get(agentNodeKey).(agentIdentity)
	return id
}

// agentNode answers the token's node and the id of the server's codec
// key.
func (s *server) agentNode(c echo.Context) error {
	id := agentOf(c)
	cl, err := s.store.GetCluster(c.Request().Context(), id.cluster)
	if err != nil {
		return storeError(err, "cluster")
	}
	n := nodeByID(cl, id.node)
	if n == nil || n.Mode != model.NodeAgent {
		return newError(http.StatusForbidden, "node %q of cluster %q is not an agent node", id.node, id.cluster)
	}
	return c.JSON(http.StatusOK, agentapi.NodeInfo{Cluster: cl.ID, Node: *n, CodecKeyID: s.cfg.CodecKeyID})
}

// agentGrant loads the grant of the request's node in the execution named
// by the query, and checks the kind is one agents use.
func (s *server) agentGrant(c echo.Context, rules map[string]bool) (*grantSet, string, string, error) {
	execID, kind := c.QueryParam("execution"), c.QueryParam("kind")
	if execID == "" || kind == "" {
		return nil, "", "", badRequest("execution and kind are required")
	}
	if !rules[kind] {
		return nil, "", "", newError(http.StatusForbidden, "agents do not have access to %q records", kind)
	}
	id := agentOf(c)
	g, err := s.grants.get(c.Request().Context(), s.store, execID, id.cluster, id.node)
	if errors.Is(err, errNoGrant) {
		return nil, "", "", newError(http.StatusForbidden, "execution %q has no steps for node %q of cluster %q", execID, id.node, id.cluster)
	}
	if err != nil {
		return nil, "", "", internalError(err)
	}
	return g, execID, kind, nil
}

var agentReadKinds = func() map[string]bool {
	m := map[string]bool{}
	for k := range agentReads {
		m[k] = true
	}
	return m
}()

// agentGetData answers one record of the node's, as raw bytes.
func (s *server) agentGetData(c echo.Context) error {
	g, execID, kind, err := s.agentGrant(c, agentReadKinds)
	if err != nil {
		return err
	}
	key := c.QueryParam("key")
	if !agentReads[kind](g, key) {
		return newError(http.StatusForbidden, "%s record %q is not node %q's", kind, key, agentOf(c).node)
	}
	data, err := s.store.GetStepData(c.Request().Context(), execID, key, kind)
	if err != nil {
		return storeError(err, kind+" record")
	}
	if kind == contract.DataParams {
		if data, err = agentParams(data, g); err != nil {
			return internalError(fmt.Errorf("parameters of %s: %w", execID, err))
		}
	}
	return c.Blob(http.StatusOK, echo.MIMEOctetStream, data)
}

// agentParams is what a node is given of an execution's parameters (a
// model.ApplyParams record): the env ref values and secrets its steps read
// by name, every variable (a template may read them at its top level,
// which no scan sees; they are not secret) and the verbose option. The
// answer travels only in this response: nothing of it is logged.
func agentParams(data []byte, g *grantSet) ([]byte, error) {
	var p model.ApplyParams
	if err := json.Unmarshal(data, &p); err != nil {
		// The record holds secrets: say nothing of its bytes.
		return nil, errors.New("the record does not decode")
	}
	p.EnvRefs = keysIn(p.EnvRefs, g.env)
	p.Secrets = keysIn(p.Secrets, g.secrets)
	return json.Marshal(p)
}

// keysIn is m's entries whose keys are in keep.
func keysIn(m map[string]string, keep map[string]bool) map[string]string {
	out := make(map[string]string, len(keep))
	for k, v := range m {
		if keep[k] {
			out[k] = v
		}
	}
	return out
}

// agentPutData writes records of the node's own steps: a JSON object of
// step id to base64 bytes, all or none.
func (s *server) agentPutData(c echo.Context) error {
	g, execID, kind, err := s.agentGrant(c, agentWrites)
	if err != nil {
		return err
	}
	var data map[string][]byte
	if err := json.NewDecoder(c.Request().Body).Decode(&data); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return newError(http.StatusRequestEntityTooLarge, "request body exceeds %d bytes", tooLarge.Limit)
		}
		return badRequest("body: a JSON object of step id to base64 data: %v", err)
	}
	for key := range data {
		if !g.steps[key] {
			return newError(http.StatusForbidden, "step %q is not node %q's", key, agentOf(c).node)
		}
	}
	if err := s.store.PutStepDataBatch(c.Request().Context(), execID, kind, data); err != nil {
		return internalError(err)
	}
	return c.NoContent(http.StatusNoContent)
}

// nodeByID is the cluster's node of that id (not name), or nil.
func nodeByID(cl *model.Cluster, id string) *model.Node {
	for i := range cl.Nodes {
		if cl.Nodes[i].ID == id {
			return &cl.Nodes[i]
		}
	}
	return nil
}
