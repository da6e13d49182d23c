package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/internal/config"
	"github.com/cairn-io/cairn/model"
)

// Environment variables of the client verbs (see internal/config).
const (
	envServer = "CAIRN_SERVER"
	envToken  = "CAIRN_API_TOKEN"
)

// remote is what a client verb needs to reach the server: --server and
// --token (falling back to CAIRN_SERVER and CAIRN_API_TOKEN) and the
// output flags.
type remote struct {
	a      *app
	server string
	token  string
	out    outputFlags
	// poll is how often an execution is polled when its events fail.
	poll time.Duration
}

// newRemote registers the connection and output flags on cmd. defFormat
// is the default of -o.
func newRemote(a *app, cmd *cobra.Command, defFormat string) *remote {
	r := &remote{a: a}
	fs := cmd.Flags()
	fs.StringVar(&r.server, "server", "", "base URL of the Cairn API (default $"+envServer+", else "+defaultServer()+")")
	fs.StringVar(&r.token, "token", "", "API bearer token (default $"+envToken+")")
	r.out.register(fs, defFormat)
	fs.DurationVar(&r.poll, "poll-interval", defaultPollInterval, "how often to poll an execution when its event stream is unavailable")
	_ = fs.MarkHidden("poll-interval")
	return r
}

func defaultServer() string {
	if v, ok := config.Lookup(envServer); ok {
		return v.Default
	}
	return "http://127.0.0.1:8080"
}

// serverURL is --server, else $CAIRN_SERVER, else the default.
func (r *remote) serverURL() string {
	if r.server != "" {
		return r.server
	}
	if v := os.Getenv(envServer); v != "" {
		return v
	}
	return defaultServer()
}

// stack connects (client) and finds the stack ref names (resolveStack),
// its failure said as apiFailure says it.
func (r *remote) stack(ctx context.Context, ref string) (*client.Client, *model.StackRecord, error) {
	c, err := r.client()
	if err != nil {
		return nil, nil, err
	}
	st, err := resolveStack(ctx, c, ref)
	if err != nil {
		return nil, nil, apiFailure(r.a, err, nil)
	}
	return c, st, nil
}

// client checks the flags and connects. The token comes from --token or
// $CAIRN_API_TOKEN; it is never printed.
func (r *remote) client() (*client.Client, error) {
	if err := r.out.check(); err != nil {
		return nil, err
	}
	token := r.token
	if token == "" {
		token = os.Getenv(envToken)
	}
	opts := []client.Option{client.WithUserAgent("cairn-cli")}
	tlsOpt, err := tlsClientOption(r.serverURL())
	if err != nil {
		return nil, err
	}
	if tlsOpt != nil {
		opts = append(opts, tlsOpt)
	}
	return client.New(r.serverURL(), token, opts...)
}

// table reports whether the output is the human one.
func (r *remote) table() bool { return r.out.format == formatTable }

// print writes v as JSON or YAML, or calls tbl for table output.
func (r *remote) print(v any, tbl func(w io.Writer) error) error {
	if r.table() {
		return tbl(r.a.stdout)
	}
	return printData(r.a.stdout, r.out.format, v)
}

// apiFailure turns an error of the server into the command's error: the
// message, every positioned detail on its own line (with names mapped back
// to the user's files by names, when given), and a hint for 401.
func apiFailure(a *app, err error, names func(model.ErrorDetail) model.ErrorDetail) error {
	var ae *client.APIError
	if !errors.As(err, &ae) {
		return err
	}
	msg := ae.Message
	switch ae.Status {
	case http.StatusUnauthorized:
		msg += " (give the API token with --token or $" + envToken + ")"
	case http.StatusConflict:
		if ae.Running != "" && !strings.Contains(msg, ae.Running) {
			msg += " (running: " + ae.Running + ")"
		}
	}
	for _, d := range ae.Details {
		if names != nil {
			d = names(d)
		}
		fmt.Fprintln(a.stderr, d.String())
	}
	return &exitError{code: exitFailure, err: fmt.Errorf("%d %s: %s", ae.Status, ae.Code, msg)}
}

// resolveStack finds a stack by id, or else by its name when exactly one
// stack has it.
func resolveStack(ctx context.Context, c *client.Client, ref string) (*model.StackRecord, error) {
	st, err := c.GetStack(ctx, ref)
	if err == nil {
		return st, nil
	}
	if !client.IsStatus(err, http.StatusNotFound) {
		return nil, err
	}
	found, lerr := c.StacksNamed(ctx, ref)
	if lerr != nil {
		return nil, lerr
	}
	switch len(found) {
	case 0:
		return nil, err
	case 1:
		return &found[0], nil
	}
	ids := make([]string, len(found))
	for i, s := range found {
		ids[i] = s.ID
	}
	return nil, fmt.Errorf("%d stacks are named %q (%s): give the id", len(found), ref, strings.Join(ids, ", "))
}
