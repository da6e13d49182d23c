// Package prepare turns what is stored (package snapshots, graph layers)
// into the step graph an execution runs; pure: no Temporal SDK, no HTTP,
// and the store only through the small interfaces it defines (store.Store
// satisfies them), so the API, the starter and the activities share one
// implementation and the activities stay thin adapters that persist what
// it returns.
//
// For graph executions it owns every step between the stored layers and
// the planner's units:
//
//   - Merge is the one layer merge (release, cluster, plugins in the
//     cluster's order), for the merged-graph route and for executions.
//   - Check validates a request once: each type merged once, validated,
//     its placeholders resolved and expanded once onto the cluster's nodes
//     (cross dependencies included), every problem collected as a
//     model.ErrorDetail. Pin stores what Check validated: each merged graph
//     as a "graph" snapshot and the expanded steps of every type as one
//     "graph-steps" snapshot, whose hash the request carries as Expansion.
//   - Prepare is an execution's own work over the pinned expansion: Fuel
//     expressions resolved with the nodes' deployment data, history
//     conditions specialized, steps a retried execution completed (or that
//     no event re-runs) turned into noops, barriers between types,
//     copy_files sources read, and planning into units. It neither merges
//     nor expands, so a retry runs exactly the steps its original execution
//     expanded.
//
// A Preparer is built once in the composition root and shared; it counts
// its merges and expansions (atomically) for /metrics.
package prepare
