package agentapi

import (
	"fmt"

	"github.com/cairn-io/cairn/model"
)

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

// NodeInfo is the node a token belongs to, and what an agent must share
// with the server to serve it.
type NodeInfo struct {
	Cluster string     `json:"cluster"`
	Node    model.Node `json:"node"`
	// CodecKeyID names the codec key the server seals Temporal payloads
	// with (codec.KeyID, never the key); empty when it has none.
	CodecKeyID string `json:"codecKeyId,omitempty"`
}

// CheckCodecKey says whether an agent whose codec key has id own (""
// for none) can serve the node: it must open the payloads the server
// seals, and seal what it returns with the same key, or every step it
// takes fails to decode and is retried until its attempts run out.
func (i *NodeInfo) CheckCodecKey(own string) error {
	switch {
	case i.CodecKeyID == own:
		return nil
	case own == "":
		return fmt.Errorf("the server seals payloads with a codec key (id %s) and this agent has none: set CAIRN_CODEC_KEY to the server's key", i.CodecKeyID)
	case i.CodecKeyID == "":
		return fmt.Errorf("this agent has a codec key (id %s) and the server has none: unset CAIRN_CODEC_KEY, or give the server the same key", own)
	}
	return fmt.Errorf("this agent's codec key (id %s) is not the server's (id %s): set CAIRN_CODEC_KEY to the server's key", own, i.CodecKeyID)
}
