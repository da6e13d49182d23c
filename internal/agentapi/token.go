// Package agentapi is what `cairn agent` and the server's agent API say to
// each other: the node credential an agent presents, the paths and the
// client an agent reaches its node's step data with. An agent holds no
// database credentials; its node token lets it read and write only the
// step data of its own node's steps (see api/agent.go for the rules).
package agentapi

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// tokenPrefix starts every node token (version 1).
const tokenPrefix = "cairn-node-v1"

// secretBytes is the size of a token's random part.
const secretBytes = 32

// maxTokenLen bounds what ParseToken reads.
const maxTokenLen = 4096

var b64 = base64.RawURLEncoding

// NewToken issues a node token for the node of the cluster: it names them
// and carries 256 random bits. The server keeps only Hash(token).
func NewToken(cluster, node string) (string, error) {
	if cluster == "" || node == "" {
		return "", errors.New("node token: a cluster and a node are required")
	}
	secret := make([]byte, secretBytes)
	if _, err := rand.Read(secret); err != nil {
		return "", fmt.Errorf("node token: %w", err)
	}
	return strings.Join([]string{tokenPrefix, b64.EncodeToString([]byte(cluster)), b64.EncodeToString([]byte(node)), b64.EncodeToString(secret)}, "."), nil
}

// ParseToken reads the cluster and node a token names. It says nothing of
// whether the token is valid: compare Hash(token) with the stored hash.
func ParseToken(token string) (cluster, node string, err error) {
	if len(token) > maxTokenLen {
		return "", "", errors.New("malformed node token: too long")
	}
	parts := strings.Split(token, ".")
	if len(parts) != 4 || parts[0] != tokenPrefix {
		return "", "", errors.New("malformed node token")
	}
	c, err1 := b64.DecodeString(parts[1])
	n, err2 := b64.DecodeString(parts[2])
	secret, err3 := b64.DecodeString(parts[3])
	if err1 != nil || err2 != nil || err3 != nil || len(c) == 0 || len(n) == 0 || len(secret) != secretBytes {
		return "", "", errors.New("malformed node token")
	}
	return string(c), string(n), nil
}

// Hash is what the server stores of a token.
func Hash(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}
