package model

// NodeToken is the answer of POST /v1/clusters/{id}/nodes/{node}/token: a
// new bearer token for an agent node, which replaces (and so revokes) the
// one it had. The server keeps only its hash: the token is shown once.
type NodeToken struct {
	Cluster string `json:"cluster"`
	Node    string `json:"node"`
	Token   string `json:"token"`
}
