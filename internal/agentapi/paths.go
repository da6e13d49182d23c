package agentapi

import "github.com/cairn-io/cairn/model"

// Routes of the agent API, under the server's base URL. Every request
// carries "Authorization: Bearer <node token>".
const (
	// PathNode (GET) answers the NodeInfo of the token's node.
	PathNode = "/v1/agent/node"
	// PathData reads one record (GET ?execution=&kind=&key=, the raw
	// bytes) or writes records (POST ?execution=&kind=, a JSON object of
	// key to base64 bytes). Kind "params" with an empty key reads the
	// execution's parameters as given to the node (a model.ApplyParams).
	PathData = "/v1/agent/data"
	// Prefix is common to every route of the agent API.
	Prefix = "/v1/agent/"
)

// NodeInfo is the node a token belongs to.
type NodeInfo struct {
	Cluster string     `json:"cluster"`
	Node    model.Node `json:"node"`
}
