package yaql

// Node is one node of an expression's syntax tree. Pos is the byte offset
// of the node in the expression's source.
type Node interface {
	Pos() int
}

type (
	// Lit is a literal: string, int64, float64, bool or nil. A bare word
	// (`self`, `name`) is a string literal, as in yaql.
	Lit struct {
		At    int
		Value any
	}
	// Var is `$` (Name "") or `$name`.
	Var struct {
		At   int
		Name string
	}
	// Attr is `x.name`.
	Attr struct {
		At   int
		X    Node
		Name string
	}
	// Index is `x[i]`.
	Index struct {
		At   int
		X    Node
		Args []Node
	}
	// Call is `f(args)` (Recv nil) or `recv.f(args)`.
	Call struct {
		At   int
		Recv Node
		Name string
		Args []Node
	}
	// Pair is `key => value` inside a call's arguments or a dict.
	Pair struct {
		At    int
		Key   Node
		Value Node
	}
	// Unary is `not x`, `-x` or `+x`.
	Unary struct {
		At int
		Op string
		X  Node
	}
	// Binary is `x op y` for and, or, in, comparisons and arithmetic.
	Binary struct {
		At   int
		Op   string
		X, Y Node
	}
	// List is `[a, b]`.
	List struct {
		At    int
		Items []Node
	}
	// Dict is `{k => v, ...}`.
	Dict struct {
		At    int
		Pairs []*Pair
	}
)

func (n *Lit) Pos() int    { return n.At }
func (n *Var) Pos() int    { return n.At }
func (n *Attr) Pos() int   { return n.At }
func (n *Index) Pos() int  { return n.At }
func (n *Call) Pos() int   { return n.At }
func (n *Pair) Pos() int   { return n.At }
func (n *Unary) Pos() int  { return n.At }
func (n *Binary) Pos() int { return n.At }
func (n *List) Pos() int   { return n.At }
func (n *Dict) Pos() int   { return n.At }

// start is the offset where the source of n begins (Pos is where its
// operator is: the dot of `x.name`, the bracket of `x[i]`).
func start(n Node) int {
	switch x := n.(type) {
	case *Attr:
		return start(x.X)
	case *Index:
		return start(x.X)
	case *Call:
		if x.Recv != nil {
			return start(x.Recv)
		}
	case *Binary:
		return start(x.X)
	case *Pair:
		return start(x.Key)
	}
	return n.Pos()
}
