package agentapi

import (
	"context"
	"net"
	"net/http"
	"time"
)

// fenceTransport makes tr safe for an agent that may be cut off from the
// server mid-request: a request the agent gave up on never reaches the
// server later.
//
// When a request's context ends (the attempt it records for was fenced
// off, see liveness.Fence, or its retries ran out) the transport closes
// its connection. A graceful close would leave the kernel sending
// whatever of the request is still queued, and retransmitting it for
// minutes, so a partition that heals could deliver a whole write of an
// agent that no longer owns the step after a newer attempt made its own.
// The connections are closed with a reset instead (SO_LINGER 0): what is
// queued is dropped, and the server never sees the request whole. Only
// HTTP/1.1 is spoken, so giving up on a request closes its connection
// (HTTP/2 would only reset the stream and keep sending its queued data).
func fenceTransport(tr *http.Transport) {
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		return c, nil
	}
	tr.ForceAttemptHTTP2 = false
	tr.Protocols = new(http.Protocols)
	tr.Protocols.SetHTTP1(true)
}

// dialTimeout bounds one connection attempt to the server; the request is
// tried again within RetryFor.
const dialTimeout = 10 * time.Second
