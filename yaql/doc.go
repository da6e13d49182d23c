// Package yaql reads the expressions of Fuel deployment graphs: yaql 2.0
// (`condition: {yaql_exp: "changed($.x)"}`, strategy amounts, parameter
// values) and nailgun's legacy condition syntax
// (`settings:common.debug.value == true`).
//
// An expression is parsed once (Parse, ParseLegacy) into an AST whose nodes
// carry their offset in the source, checked (every function known, called
// with a valid number of arguments; unsupported syntax refused) and then
// evaluated any number of times over JSON-like data: map[string]any, []any,
// string, numbers, bool and nil. Evaluation is bounded by Limits, so a
// hostile expression cannot hang or exhaust memory.
//
// Fuel's own functions (changed, changedAny, changedAll, added, deleted,
// new, old) compare a node's current deployment data with the data of its
// last successful run, as nailgun's yaql extensions did; with no previous
// run every change function answers true.
//
// The package is a leaf: it imports nothing of Cairn's but model.
package yaql
