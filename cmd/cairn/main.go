// Command cairn is Cairn's single binary: offline document tools
// (validate, graph merge/show) and the verbs that talk to a Cairn server.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/cairn-io/cairn/graphs"
)

func main() {
	// The server evaluates posted Jsonnet in a sandboxed child: this same
	// binary, re-executed; it never returns when it is that child.
	graphs.ServeJsonnetChild()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
