// Package workflows holds Cairn's durable executions, the Temporal
// workflows the worker registers:
//
//   - ApplyWorkflow brings a stack to a package snapshot: it prepares the
//     steps, runs them with the executor and writes the stack's record; a
//     failure or cancellation rolls every change back by default. It runs
//     under its stack's lock id (StackWorkflowID).
//   - DryRunWorkflow plans a package against a stack without changing
//     anything and stores the plan; with approval settings it then waits
//     for the "approval" Update and applies the approved plan as a child
//     ApplyWorkflow (approval.go).
//   - DestroyWorkflow deletes a stack's resources in reverse dependency
//     order and records what is left, removing the stack's record when
//     asked and all went well; it holds the stack's lock id too.
//   - GraphExecutionWorkflow merges a cluster's graph types from their
//     release, cluster and plugin layers and runs their tasks on the
//     cluster's nodes, as Fuel runs a custom graph; it holds the
//     cluster's lock id (GraphWorkflowID).
//   - ShardWorkflow runs, or undoes, one shard of a plan too large for one
//     history, as the child of the execution that prepared it.
//   - DriftCheckWorkflow is a stack's drift schedule's action: a child
//     dry-run of the package the stack last applied, recorded as the
//     stack's drift, with an optional repair by a child apply.
//   - HookDeliveryWorkflow sends an execution's end (or a drift found) to
//     the stack's hooks, retrying each hook on its own; executions start it
//     as an abandoned child so the delivery outlives them.
//
// Apply, dry-run, destroy, graph and shard executions run their units with
// the Executor (executor.go): a DAG run with ordering, parallelism and
// strategy caps, routing to node task queues, retries from meta params and
// OnFailure handling, whose phases (phase.go) take it from running through
// a pause for an operator's decision or a drain to a saga's compensation.
// Every workflow checks first that it runs under the id its input calls
// for (ids.go).
//
// Workflows carry references only: the package snapshot hash, unit
// descriptors and step ids. The steps, states and plans live in the store.
package workflows
