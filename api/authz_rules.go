package api

import (
	"net/http"

	"github.com/cairn-io/cairn/internal/agentapi"
	"github.com/cairn-io/cairn/model"
)

// targetKind says how a rule finds what a request acts on.
type targetKind int

const (
	// tOpen routes answer anyone: the probes and the live pages' shell.
	tOpen targetKind = iota
	// tNode routes are the agent API's: node tokens, not API tokens.
	tNode
	// tSignedIn routes need only a valid token; the handler shows what
	// is in the token's scope (lists, the audit trail, whoami).
	tSignedIn
	// tGlobal routes name nothing: the role must hold everywhere (an
	// unscoped grant).
	tGlobal
	// tSomewhere routes need the role on some scope; the handler checks
	// the body's target (creating a stack, export, validating).
	tSomewhere
	// tStack, tCluster and tRelease routes name the resource by :id.
	tStack
	tCluster
	tRelease
	// tExecution routes name an execution by :id: its stack, or its
	// cluster for a graph execution.
	tExecution
	// tCodec is the Temporal UI's codec endpoint: /decode reads any
	// execution's payloads (viewer everywhere), /encode seals workflow
	// inputs (admin everywhere).
	tCodec
)

// rule is what a route requires: a role and where it must hold.
type rule struct {
	role   model.Role
	target targetKind
}

// routeKey names a route as echo registers it: "POST /v1/stacks/:id/apply".
func routeKey(method, path string) string { return method + " " + path }

// authzRules maps every registered route to its rule. A route missing here
// is refused to everyone (authorize), and TestEveryRouteHasARule fails.
func authzRules() map[string]rule {
	const (
		get, post, put, patch, del = http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete
	)
	var (
		viewer   = model.RoleViewer
		planner  = model.RolePlanner
		deployer = model.RoleDeployer
		approver = model.RoleApprover
		author   = model.RoleGraphAuthor
		admin    = model.RoleAdmin
	)
	r := map[string]rule{}
	add := func(method, path string, role model.Role, t targetKind) { r[routeKey(method, path)] = rule{role, t} }

	add(get, "/healthz", "", tOpen)
	add(get, "/readyz", "", tOpen)
	add(get, "/metrics", viewer, tGlobal)
	add(get, "/openapi.yaml", "", tSignedIn)

	// Packages and stacks.
	add(post, "/v1/packages/validate", planner, tSomewhere)
	add(post, "/v1/stacks", deployer, tSomewhere) // createStack checks the labels
	add(get, "/v1/stacks", "", tSignedIn)
	add(get, "/v1/stacks/:id", viewer, tStack)
	add(del, "/v1/stacks/:id", deployer, tStack)
	add(put, "/v1/stacks/:id/labels", admin, tStack)
	add(post, "/v1/stacks/:id/dry-run", planner, tStack)
	add(post, "/v1/stacks/:id/apply", deployer, tStack)
	add(post, "/v1/stacks/:id/uploads", planner, tStack)
	add(get, "/v1/stacks/:id/uploads/:upload", planner, tStack)
	add(del, "/v1/stacks/:id/uploads/:upload", planner, tStack)
	add(put, "/v1/stacks/:id/uploads/:upload/parts/:part", planner, tStack)
	add(put, "/v1/stacks/:id/drift", deployer, tStack)
	add(patch, "/v1/stacks/:id/drift", deployer, tStack)
	add(get, "/v1/stacks/:id/drift", viewer, tStack)
	add(del, "/v1/stacks/:id/drift", deployer, tStack)
	add(put, "/v1/stacks/:id/hooks", admin, tStack)
	add(get, "/v1/stacks/:id/hooks", admin, tStack)
	add(del, "/v1/stacks/:id/hooks", admin, tStack)
	// Four eyes: setting or clearing who must approve is an admin's act;
	// what is required anyone who sees the stack or cluster may read.
	add(put, "/v1/stacks/:id/approvals", admin, tStack)
	add(get, "/v1/stacks/:id/approvals", viewer, tStack)
	add(del, "/v1/stacks/:id/approvals", admin, tStack)
	add(put, "/v1/clusters/:id/approvals", admin, tCluster)
	add(get, "/v1/clusters/:id/approvals", viewer, tCluster)
	add(del, "/v1/clusters/:id/approvals", admin, tCluster)
	add(post, "/v1/export", viewer, tSomewhere) // export checks the body
	add(get, "/v1/kinds", "", tSignedIn)
	add(get, "/v1/kinds/:name", "", tSignedIn)

	// Releases, plugins, clusters and their graphs. Plugins are shared by
	// every cluster that attaches them: changing one needs the role
	// everywhere.
	for _, o := range []struct {
		collection string
		t          targetKind
	}{{"releases", tRelease}, {"plugins", tGlobal}, {"clusters", tCluster}} {
		base := "/v1/" + o.collection
		read := o.t
		if o.t == tGlobal {
			read = tSignedIn
		}
		add(post, base, admin, tGlobal)
		add(get, base, "", tSignedIn)
		add(get, base+"/:id", viewer, read)
		add(put, base+"/:id", admin, o.t)
		add(del, base+"/:id", admin, o.t)
		add(get, base+"/:id/graphs", viewer, read)
		add(get, base+"/:id/graphs/:type", viewer, read)
		add(put, base+"/:id/graphs/:type", author, o.t)
		add(del, base+"/:id/graphs/:type", author, o.t)
	}
	add(put, "/v1/releases/:id/labels", admin, tRelease)
	add(put, "/v1/clusters/:id/labels", admin, tCluster)
	add(get, "/v1/clusters/:id/settings", viewer, tCluster)
	add(put, "/v1/clusters/:id/settings", author, tCluster)
	add(patch, "/v1/clusters/:id/settings", author, tCluster)
	add(get, "/v1/graphs", "", tSignedIn)
	add(get, "/v1/clusters/:id/graphs/:type/merged", viewer, tCluster)

	// Executions.
	add(post, "/v1/clusters/:id/executions", deployer, tCluster)
	add(get, "/v1/executions", "", tSignedIn)
	add(get, "/v1/executions/:id", viewer, tExecution)
	add(get, "/v1/executions/:id/events", viewer, tExecution)
	add(get, "/v1/executions/:id/graph", viewer, tExecution)
	add(get, "/v1/executions/:id/steps", viewer, tExecution)
	add(post, "/v1/executions/:id/cancel", deployer, tExecution)
	add(post, "/v1/executions/:id/retry", deployer, tExecution)
	add(post, "/v1/executions/:id/decision", deployer, tExecution)
	add(post, "/v1/executions/:id/approve", approver, tExecution)
	add(post, "/v1/executions/:id/reject", approver, tExecution)

	// Agents: the agent API takes node tokens; issuing them is admin's.
	add(get, agentapi.PathNode, "", tNode)
	add(get, agentapi.PathData, "", tNode)
	add(post, agentapi.PathData, "", tNode)
	add(post, agentapi.PathFacts, "", tNode)
	add(get, agentapi.PathWatch, "", tNode)
	add(post, agentapi.PathWatchEvents, "", tNode)
	add(post, "/v1/clusters/:id/nodes/:node/token", admin, tCluster)
	add(post, "/v1/clusters/:id/nodes/:node/token/rotate", admin, tCluster)
	add(del, "/v1/clusters/:id/nodes/:node/token", admin, tCluster)

	// Teams and the audit trail.
	add(post, "/v1/principals", admin, tGlobal)
	add(get, "/v1/principals", admin, tGlobal)
	add(get, "/v1/principals/:id", admin, tGlobal)
	add(del, "/v1/principals/:id", admin, tGlobal)
	add(post, "/v1/tokens", admin, tGlobal)
	add(get, "/v1/tokens", admin, tGlobal)
	add(del, "/v1/tokens/:id", admin, tGlobal)
	add(get, "/v1/whoami", "", tSignedIn)
	add(get, "/v1/audit", "", tSignedIn)

	// The Temporal UI's codec endpoint and the live pages' shell.
	add(post, CodecPrefix+"*", "", tCodec)
	add(get, "/ui", "", tOpen)
	add(get, UIPrefix, "", tOpen)
	add(get, UIPrefix+"executions/:id", "", tOpen)
	add(get, UIPrefix+"assets/:file", "", tOpen)
	return r
}
