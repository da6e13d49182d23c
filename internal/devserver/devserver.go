// Package devserver holds how Cairn starts the Temporal dev server (`cairn
// dev`, the tests, the benchmark): with Cairn's search attributes
// registered and the dynamic config a deployment orchestrator wants.
package devserver

import "github.com/cairn-io/cairn/internal/searchattr"

// DynamicConfig is the dev server's dynamic config, as `KEY=VALUE` for
// `--dynamic-config-value`. Each entry is there for latency, which decides
// how long a chain of units takes:
//   - eager activity execution: an activity scheduled on the workflow's own
//     task queue comes back in the answer to the workflow task that
//     scheduled it, instead of going through matching;
//   - one partition per task queue: with the default four, a task and the
//     poller that would take it can sit on different partitions, and the
//     forwarding between them costs tens of milliseconds a task on an idle
//     server.
//
// Measured here with both, a unit's overhead between two sequential units
// (schedule → start → complete → next workflow task) fell from ~95 ms to
// ~10 ms: activity dispatch from ~45 ms to none, workflow-task dispatch
// from ~45 ms to ~4 ms.
//
// A production cluster sets the first in its dynamic config as well
// (docker-compose does); the second suits a single-host server.
var DynamicConfig = []string{
	"system.enableActivityEagerExecution=true",
	"matching.numTaskqueueReadPartitions=1",
	"matching.numTaskqueueWritePartitions=1",
}

// Args are the extra `temporal server start-dev` flags Cairn starts the dev
// server with.
func Args() []string {
	args := searchattr.DevServerArgs()
	for _, kv := range DynamicConfig {
		args = append(args, "--dynamic-config-value", kv)
	}
	return args
}
