package model

// NodeToken is the answer of POST /v1/clusters/{id}/nodes/{node}/token
// (and .../token/rotate): a new bearer token for an agent node, which
// replaces (and so revokes) the one it had. The server keeps only its hash: the token is shown once.
type NodeToken struct {
	Cluster string `json:"cluster"`
	Node    string `json:"node"`
	Token   string `json:"token"`
	// ServerFingerprint is the SHA-256 fingerprint of the certificate
	// the server's API is served with ("sha256:<hex>"; empty over plain
	// HTTP): the agent pins it (CAIRN_SERVER_FINGERPRINT).
	ServerFingerprint string `json:"serverFingerprint,omitempty"`
}
