package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/cairn-io/cairn/client"
	"github.com/cairn-io/cairn/model"
)

// runE is the function cobra runs for a command.
type runE func(cmd *cobra.Command, args []string) error

// showVerb is the RunE of a client verb that makes one call and prints its
// answer: it connects (checking the output flags), calls call with the
// command's context and arguments, turns an error of the server into the
// command's (apiFailure) and prints the answer as JSON or YAML, or by tbl
// for table output. One request per call.
func showVerb[T any](r *remote, call func(ctx context.Context, c *client.Client, args []string) (T, error), tbl func(w io.Writer, v T) error) runE {
	return func(cmd *cobra.Command, args []string) error {
		c, err := r.client()
		if err != nil {
			return err
		}
		v, err := call(cmd.Context(), c, args)
		if err != nil {
			return apiFailure(r.a, err, nil)
		}
		return r.print(v, func(w io.Writer) error { return tbl(w, v) })
	}
}

// listVerb is showVerb for a listing: list is a method of the client, such
// as (*client.Client).ListStacks. JSON and YAML print its answer as
// {key: [...]}, an empty list rather than null.
func listVerb[E any](r *remote, key string, list func(*client.Client, context.Context) ([]E, error), tbl func(w io.Writer, list []E) error) runE {
	return func(cmd *cobra.Command, args []string) error {
		c, err := r.client()
		if err != nil {
			return err
		}
		got, err := list(c, cmd.Context())
		if err != nil {
			return apiFailure(r.a, err, nil)
		}
		if got == nil {
			got = []E{}
		}
		return r.print(map[string]any{key: got}, func(w io.Writer) error { return tbl(w, got) })
	}
}

// onStack adapts a call on a stack to showVerb: the stack is the first
// argument, by id or by name (resolveStack), one more request.
func onStack[T any](call func(ctx context.Context, c *client.Client, st *model.StackRecord) (T, error)) func(context.Context, *client.Client, []string) (T, error) {
	return func(ctx context.Context, c *client.Client, args []string) (T, error) {
		st, err := resolveStack(ctx, c, args[0])
		if err != nil {
			var zero T
			return zero, err
		}
		return call(ctx, c, st)
	}
}
