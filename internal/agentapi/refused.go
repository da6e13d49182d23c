package agentapi

import "errors"

// ErrTokenRefused says the server no longer accepts the agent's node
// token: it was revoked, or rotated and the agent still has the old one.
var ErrTokenRefused = errors.New("the server refuses this agent's node token (revoked, or replaced by a newer one): set the token `cairn node token` issued last and restart the agent")

// OnRefused sets fn to be called, from the request's goroutine, each time
// the server answers 401 to the token: the agent stops taking steps it
// could not record. Set it before the client is used.
func (c *Client) OnRefused(fn func()) { c.refused = fn }
