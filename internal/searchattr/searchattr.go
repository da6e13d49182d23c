// Package searchattr names Cairn's custom Temporal search attributes, so the
// Temporal UI and the API can filter executions by them.
package searchattr

import (
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
)

// Keys of Cairn's search attributes: keywords, and Drift, a bool.
var (
	Kind      = temporal.NewSearchAttributeKeyKeyword("CairnKind")      // apply, dry-run, graph, destroy
	Stack     = temporal.NewSearchAttributeKeyKeyword("CairnStack")     // stack id
	Cluster   = temporal.NewSearchAttributeKeyKeyword("CairnCluster")   // cluster id
	GraphType = temporal.NewSearchAttributeKeyKeyword("CairnGraphType") // graph type(s)
	RetryOf   = temporal.NewSearchAttributeKeyKeyword("CairnRetryOf")   // execution id retried
	// Approval is where a plan awaiting approval stands (awaiting,
	// approved, rejected, expired, stale); absent on other executions.
	Approval = temporal.NewSearchAttributeKeyKeyword("CairnApproval")
	// Awaiting is what a running execution waits for from an operator:
	// "decision" (a step paused, OnFailure pause) or "approval" (a plan);
	// unset while it does not wait, so `CairnAwaiting = 'decision'` lists
	// paused executions.
	Awaiting = temporal.NewSearchAttributeKeyKeyword("CairnAwaiting")
	// Drift marks a drift check that found the stack drifted (false when
	// it found none), so `CairnDrift = true` lists drifted stacks.
	Drift = temporal.NewSearchAttributeKeyBool("CairnDrift")
)

// All lists every key with its type, for registration.
func All() map[string]enums.IndexedValueType {
	return map[string]enums.IndexedValueType{
		Kind.GetName():      enums.INDEXED_VALUE_TYPE_KEYWORD,
		Stack.GetName():     enums.INDEXED_VALUE_TYPE_KEYWORD,
		Cluster.GetName():   enums.INDEXED_VALUE_TYPE_KEYWORD,
		GraphType.GetName(): enums.INDEXED_VALUE_TYPE_KEYWORD,
		RetryOf.GetName():   enums.INDEXED_VALUE_TYPE_KEYWORD,
		Approval.GetName():  enums.INDEXED_VALUE_TYPE_KEYWORD,
		Awaiting.GetName():  enums.INDEXED_VALUE_TYPE_KEYWORD,
		Drift.GetName():     enums.INDEXED_VALUE_TYPE_BOOL,
	}
}

// DevServerArgs are the dev server flags that pre-register the attributes
// (`temporal server start-dev --search-attribute NAME=Keyword`).
func DevServerArgs() []string {
	var args []string
	for name, typ := range All() {
		t := "Keyword"
		if typ == enums.INDEXED_VALUE_TYPE_BOOL {
			t = "Bool"
		}
		args = append(args, "--search-attribute", name+"="+t)
	}
	return args
}
