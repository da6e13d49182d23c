// Package workflows holds Cairn's durable executions: ApplyWorkflow,
// DryRunWorkflow and DestroyWorkflow, the DAG executor they share (ordering,
// parallelism and strategy caps, routing to node task queues, retries from
// meta params, onFailure handling with saga compensation and operator
// decisions), and the shard workflow that splits very large plans across
// child workflows so no history nears Temporal's limits.
//
// Workflows carry references only: the package snapshot hash, unit
// descriptors and step ids. The steps, states and plans live in the store.
package workflows
