package archtest

// The rules of the flow, in one table. Data flows one way: api -> starter
// -> (Temporal) -> workflows -> activities -> providers; the composition
// root (server, worker, cmd) sits on top and the leaves at the bottom.
//
// A pattern names a Cairn package by its path inside the module ("api"),
// a Cairn package and everything below it ("cmd/..."), any Cairn package
// ("*"), or an outside package by its full path, optionally with "/..."
// ("go.temporal.io/..."). Only production code is checked: a test may
// assemble whatever it exercises.
var rules = []rule{
	{
		from:   []string{"api/..."},
		forbid: []string{"activities/...", "providers/...", "workflows/..."},
		why:    "api talks to starter for executions and to the store for reads; it neither runs workflows nor touches resources",
	},
	{
		from:   []string{"starter/..."},
		forbid: []string{"activities/..."},
		why:    "starter only starts, signals and queries executions; the activities run in the worker",
	},
	{
		from:   []string{"workflows/..."},
		forbid: []string{"activities/...", "providers/...", "store/...", "prepare/..."},
		why:    "workflows are deterministic and do no I/O; they reach the world through contract",
	},
	{
		from:   []string{"activities/..."},
		forbid: []string{"api/...", "starter/...", "workflows/..."},
		why:    "activities are the adapters below the workflows; they know nothing of the API or of how executions start",
	},
	{
		from:   []string{"providers/..."},
		forbid: []string{"api/...", "starter/...", "workflows/...", "activities/...", "prepare/...", "store/...", "go.temporal.io/..."},
		why:    "a provider reads and changes one kind of resource; executions, plans and the store are above it",
	},
	{
		from:   []string{"contract"},
		forbid: []string{"*"},
		allow:  []string{"model"},
		why:    "contract is the wire between the layers (requests, workflow and activity inputs): model's types only, so every layer can share it",
	},
	{
		from: []string{"prepare/..."},
		forbid: []string{"api/...", "starter/...", "workflows/...", "activities/...", "providers/...",
			"go.temporal.io/...", "github.com/labstack/echo/..."},
		why: "prepare is pure preparation between a stored snapshot and a step graph: no HTTP, no Temporal, no execution",
	},
	{
		from:   []string{"model", "dag", "internal/suggest", "internal/nested"},
		forbid: []string{"*"},
		why:    "a leaf imports no Cairn package, so every layer can share it without a cycle",
	},
	{
		from:   []string{"expr"},
		forbid: []string{"*"},
		allow:  []string{"model", "internal/nested"},
		why:    "expr is a leaf above model and the nested-value walker only, so kinds, graphs, providers and activities share one expression language",
	},
	{
		from:   []string{"client/..."},
		forbid: []string{"*"},
		allow:  []string{"model", "contract"},
		why:    "the Go client speaks the HTTP API in model's and contract's wire types only, so its users do not build the server",
	},
	{
		from:   []string{"*"},
		unless: []string{"server/...", "worker/...", "cmd/..."},
		forbid: []string{"server/...", "worker/...", "cmd/..."},
		why:    "nothing imports the composition root (server, worker, cmd): it wires the layers and sits above them all",
	},
}
