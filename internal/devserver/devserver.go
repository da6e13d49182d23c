// Package devserver holds how Cairn starts the Temporal dev server (`cairn
// dev`, the tests, the benchmark): with Cairn's search attributes
// registered and the dynamic config a deployment orchestrator wants.
package devserver

import "github.com/cairn-io/cairn/internal/searchattr"

// DynamicConfig is the dev server's dynamic config, as `KEY=VALUE` for
// `--dynamic-config-value`. Each entry is there for latency, which decides
// how long a chain of units, or a graph's dependency levels, take:
//   - the history service's transfer-queue reader may read 1,000 times a
//     second instead of 20: every task that leaves history for matching (a
//     workflow task after an activity completes, an activity task on a
//     node's queue) is read by that reader, which waited for its rate
//     limiter (burst 1, 20 a second per shard; the dev server has one
//     shard) before each read, ~50 ms a hop under any steady load;
//   - eager activity execution: an activity scheduled on the workflow's own
//     task queue comes back in the answer to the workflow task that
//     scheduled it, instead of going through matching;
//   - one partition per task queue: with the default four, a task and the
//     poller that would take it can sit on different partitions, and the
//     forwarding between them costs tens of milliseconds a task on an idle
//     server.
//
// Measured here (BenchmarkSequentialStep), one step's round trip through
// matching (schedule → start → complete → next workflow task) fell from
// 100.5 ms with the defaults to 5–6 ms with all three; an eager one from
// 50.5 ms to 4–5 ms.
//
// A production cluster sets the first two in its dynamic config as well
// (deploy/temporal-dynamic-config.yaml, which docker-compose mounts): the
// rate is per history shard there, and one workflow's tasks all go through
// its shard's reader. The third suits a single-host server.
var DynamicConfig = []string{
	"history.transferProcessorMaxPollRPS=1000",
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
