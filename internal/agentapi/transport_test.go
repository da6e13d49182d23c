package agentapi

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A request the agent gives up on (its attempt was fenced off) ends its
// connection with a reset, so whatever of it the kernel still held is
// dropped rather than delivered once a partition heals; and the agent
// speaks HTTP/1.1 only, where giving up closes the connection.
func TestClientResetsWhatItGivesUpOn(t *testing.T) {
	token, err := NewToken("c", "n")
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	type seen struct {
		proto   string
		readErr error
	}
	got := make(chan seen, 1)
	headers := make(chan struct{})
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		r := bufio.NewReader(conn)
		req, err := http.ReadRequest(r)
		if err != nil {
			got <- seen{readErr: err}
			return
		}
		close(headers) // it never answers: the client gives up
		_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, err = io.Copy(io.Discard, r)
		got <- seen{proto: req.Proto, readErr: err}
	}()
	c, err := NewClient("http://"+ln.Addr().String(), token, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-headers
		cancel()
	}()
	_, err = c.Node(ctx)
	require.ErrorIs(t, err, context.Canceled)
	select {
	case s := <-got:
		assert.Equal(t, "HTTP/1.1", s.proto)
		assert.True(t, errors.Is(s.readErr, syscall.ECONNRESET), "the connection was closed with %v, not reset", s.readErr)
	case <-time.After(30 * time.Second):
		t.Fatal("the server saw nothing")
	}
}
