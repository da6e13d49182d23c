package testenv

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// TLSFrontendOptions configure a TLSFrontend.
type TLSFrontendOptions struct {
	// Certificate is the frontend's server certificate.
	Certificate tls.Certificate
	// ClientCAs, when set, make a client certificate signed by one of them
	// required: a handshake without one, or with another, fails.
	ClientCAs *x509.CertPool
	// APIKey, when set, is required as "authorization: Bearer <key>" on
	// every call; others get Unauthenticated.
	APIKey string
}

// Call is one gRPC call the frontend received.
type Call struct {
	Method string
	// Authorization is the call's authorization header.
	Authorization string
	// ClientCN is the common name of the client certificate of the TLS
	// connection the call came on ("" without one).
	ClientCN string
}

// TLSFrontend is a Temporal frontend over TLS for tests: a gRPC server
// terminating TLS (HTTP/2, optionally requiring a client certificate and an
// API key) that forwards every unary call, bytes as they are, to a plain
// Temporal frontend such as the dev server's, and records what it saw.
type TLSFrontend struct {
	// HostPort is where it listens, on 127.0.0.1.
	HostPort string

	opts    TLSFrontendOptions
	backend *grpc.ClientConn
	mu      sync.Mutex
	calls   []Call
}

// StartTLSFrontend serves a TLSFrontend before backend (host:port of a
// plain-text Temporal frontend) until the test ends.
func StartTLSFrontend(t testing.TB, backend string, o TLSFrontendOptions) *TLSFrontend {
	t.Helper()
	conn, err := grpc.NewClient(backend, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("TLS frontend: backend %s: %v", backend, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	tc := &tls.Config{Certificates: []tls.Certificate{o.Certificate}, MinVersion: tls.VersionTLS12}
	if o.ClientCAs != nil {
		tc.ClientAuth, tc.ClientCAs = tls.RequireAndVerifyClientCert, o.ClientCAs
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("TLS frontend: %v", err)
	}
	f := &TLSFrontend{HostPort: ln.Addr().String(), opts: o, backend: conn}
	// credentials.NewTLS offers HTTP/2 (ALPN h2), as gRPC requires.
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(tc)), grpc.ForceServerCodec(rawCodec{}),
		grpc.UnknownServiceHandler(f.forward))
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return f
}

// Calls are the calls received so far.
func (f *TLSFrontend) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Call(nil), f.calls...)
}

// forward relays one unary call to the backend.
func (f *TLSFrontend) forward(_ any, stream grpc.ServerStream) error {
	ctx := stream.Context()
	method, _ := grpc.MethodFromServerStream(stream)
	md, _ := metadata.FromIncomingContext(ctx)
	call := Call{Method: method}
	if v := md.Get("authorization"); len(v) > 0 {
		call.Authorization = v[0]
	}
	if p, ok := peer.FromContext(ctx); ok {
		if info, ok := p.AuthInfo.(credentials.TLSInfo); ok && len(info.State.PeerCertificates) > 0 {
			call.ClientCN = info.State.PeerCertificates[0].Subject.CommonName
		}
	}
	f.mu.Lock()
	f.calls = append(f.calls, call)
	f.mu.Unlock()
	if f.opts.APIKey != "" && call.Authorization != "Bearer "+f.opts.APIKey {
		return status.Error(codes.Unauthenticated, "missing or wrong API key")
	}

	var in frame
	if err := stream.RecvMsg(&in); err != nil {
		return err
	}
	out := metadata.MD{}
	for k, v := range md {
		if !strings.HasPrefix(k, ":") && !strings.HasPrefix(k, "grpc-") && k != "content-type" && k != "user-agent" && k != "te" {
			out[k] = v
		}
	}
	var resp frame
	var header, trailer metadata.MD
	err := f.backend.Invoke(metadata.NewOutgoingContext(ctx, out), method, &in, &resp,
		grpc.ForceCodec(rawCodec{}), grpc.Header(&header), grpc.Trailer(&trailer))
	_ = stream.SetHeader(header)
	stream.SetTrailer(trailer)
	if err != nil {
		return err
	}
	return stream.SendMsg(&resp)
}

// frame is one gRPC message, undecoded.
type frame []byte

// rawCodec passes messages through as bytes. Its name is "proto" so the
// backend reads the content type the client sent.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) ([]byte, error) {
	f, ok := v.(*frame)
	if !ok {
		return nil, errors.New("raw codec: not a frame")
	}
	return *f, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	f, ok := v.(*frame)
	if !ok {
		return errors.New("raw codec: not a frame")
	}
	*f = append((*f)[:0], data...)
	return nil
}
