package model

import (
	"fmt"
	"slices"
	"strings"
)

// Role is what a token may do within its scope. Roles imply others (see
// Implies): admin every role; deployer planner; planner, approver and
// graph-author viewer.
type Role string

const (
	// RoleViewer reads anything in scope.
	RoleViewer Role = "viewer"
	// RolePlanner validates packages and runs dry-runs.
	RolePlanner Role = "planner"
	// RoleDeployer applies and destroys stacks, executes graphs and
	// cancels, retries and decides executions.
	RoleDeployer Role = "deployer"
	// RoleApprover approves and rejects plans awaiting approval.
	RoleApprover Role = "approver"
	// RoleGraphAuthor uploads graphs and edits cluster settings: the same
	// as running any command on the nodes in scope.
	RoleGraphAuthor Role = "graph-author"
	// RoleAdmin may do everything, principals and tokens included.
	RoleAdmin Role = "admin"
)

// Roles lists every role, least to most.
var Roles = []Role{RoleViewer, RolePlanner, RoleDeployer, RoleApprover, RoleGraphAuthor, RoleAdmin}

// Implies reports whether holding r grants want.
func (r Role) Implies(want Role) bool {
	if r == want || r == RoleAdmin {
		return true
	}
	switch r {
	case RoleDeployer:
		return want == RolePlanner || want == RoleViewer
	case RolePlanner, RoleApprover, RoleGraphAuthor:
		return want == RoleViewer
	}
	return false
}

// Valid reports whether r is one of Roles.
func (r Role) Valid() bool { return slices.Contains(Roles, r) }

// ScopeKind names what a scope selects.
type ScopeKind string

const (
	ScopeStack   ScopeKind = "stack"
	ScopeCluster ScopeKind = "cluster"
	ScopeRelease ScopeKind = "release"
)

// Grant is one role of a token and where it holds. A grant naming no
// stacks, clusters, releases and no selector holds everywhere; otherwise
// it holds on the stacks, clusters and releases it names by id, and on any
// of them whose labels carry every pair of Selector.
type Grant struct {
	Role     Role     `json:"role"`
	Stacks   []string `json:"stacks,omitempty"`
	Clusters []string `json:"clusters,omitempty"`
	Releases []string `json:"releases,omitempty"`
	// Selector is "key=value[,key=value…]": every pair must match.
	Selector string `json:"selector,omitempty"`
}

// Unscoped reports whether g holds everywhere.
func (g Grant) Unscoped() bool {
	return len(g.Stacks) == 0 && len(g.Clusters) == 0 && len(g.Releases) == 0 && g.Selector == ""
}

// Holds reports whether g grants want on the resource of kind and id with
// labels. An empty kind is a route that names no resource: only an
// unscoped grant holds there.
func (g Grant) Holds(want Role, kind ScopeKind, id string, labels map[string]string) bool {
	if !g.Role.Implies(want) {
		return false
	}
	if g.Unscoped() {
		return true
	}
	switch kind {
	case ScopeStack:
		if slices.Contains(g.Stacks, id) {
			return true
		}
	case ScopeCluster:
		if slices.Contains(g.Clusters, id) {
			return true
		}
	case ScopeRelease:
		if slices.Contains(g.Releases, id) {
			return true
		}
	default:
		return false
	}
	if g.Selector == "" {
		return false
	}
	sel, err := ParseSelector(g.Selector)
	return err == nil && sel.Matches(labels)
}

// Selector is a parsed label selector: pairs that must all match.
type Selector map[string]string

// ParseSelector reads "key=value[,key=value…]". Keys and values are plain
// (letters, digits, '-', '_', '.', '/'); an empty string selects nothing
// and is an error.
func ParseSelector(s string) (Selector, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("selector is empty: want key=value[,key=value…]")
	}
	out := Selector{}
	for part := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, fmt.Errorf("selector %q: %q is not key=value", s, part)
		}
		if err := CheckLabel(k, v); err != nil {
			return nil, fmt.Errorf("selector %q: %w", s, err)
		}
		out[k] = v
	}
	return out, nil
}

// Matches reports whether labels carry every pair of the selector.
func (s Selector) Matches(labels map[string]string) bool {
	for k, v := range s {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// MaxLabels bounds the labels of one stack, cluster or release.
const MaxLabels = 32

// CheckLabel refuses a label whose key or value is empty, longer than 63
// characters, or holds anything but letters, digits, '-', '_', '.', '/'.
func CheckLabel(key, value string) error {
	for _, p := range [][2]string{{"key", key}, {"value", value}} {
		if p[1] == "" || len(p[1]) > 63 {
			return fmt.Errorf("label %s %q must be 1 to 63 characters", p[0], p[1])
		}
		for _, r := range p[1] {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./", r)) {
				return fmt.Errorf("label %s %q may hold only letters, digits, '-', '_', '.' and '/'", p[0], p[1])
			}
		}
	}
	return nil
}

// CheckLabels checks every label and their number.
func CheckLabels(labels map[string]string) error {
	if len(labels) > MaxLabels {
		return fmt.Errorf("%d labels, at most %d", len(labels), MaxLabels)
	}
	for k, v := range labels {
		if err := CheckLabel(k, v); err != nil {
			return err
		}
	}
	return nil
}

// PrincipalKind says whether a principal is a person or a program.
type PrincipalKind string

const (
	PrincipalUser    PrincipalKind = "user"
	PrincipalService PrincipalKind = "service"
)

// Principal is who acts: a user or a service account, owning tokens.
type Principal struct {
	ID        string        `json:"id"`
	Name      string        `json:"name"`
	Kind      PrincipalKind `json:"kind"`
	CreatedAt Time          `json:"createdAt"`
	// Disabled principals' tokens are refused.
	Disabled bool `json:"disabled,omitempty"`
}

// PrincipalInput is the body of POST /v1/principals.
type PrincipalInput struct {
	Name string        `json:"name"`
	Kind PrincipalKind `json:"kind,omitempty"`
}

// PrincipalList answers GET /v1/principals.
type PrincipalList struct {
	Principals []Principal `json:"principals"`
}

// TokenInput is the body of POST /v1/tokens: the principal (id or name)
// the token acts as, its grants and when it expires (nil: never).
type TokenInput struct {
	Principal string  `json:"principal"`
	Roles     []Grant `json:"roles"`
	ExpiresAt *Time   `json:"expiresAt,omitempty"`
}

// Token is an API token as the server keeps and shows it: never the token
// itself, only its id and the first characters for recognition.
type Token struct {
	ID          string  `json:"id"`
	PrincipalID string  `json:"principalId"`
	Principal   string  `json:"principal"`
	Prefix      string  `json:"prefix"`
	Roles       []Grant `json:"roles"`
	CreatedAt   Time    `json:"createdAt"`
	ExpiresAt   *Time   `json:"expiresAt,omitempty"`
	LastUsed    *Time   `json:"lastUsed,omitempty"`
}

// TokenCreated answers POST /v1/tokens: the token, shown this once.
type TokenCreated struct {
	ID     string `json:"id"`
	Token  string `json:"token"`
	Record Token  `json:"record"`
}

// TokenList answers GET /v1/tokens.
type TokenList struct {
	Tokens []Token `json:"tokens"`
}

// Whoami answers GET /v1/whoami: who the request's token acts as and its
// grants.
type Whoami struct {
	Principal string  `json:"principal"`
	Roles     []Grant `json:"roles"`
	// Can lists, when asked of one execution, the actions the token may
	// take on it: cancel, retry, decide, approve.
	Can []string `json:"can,omitempty"`
}

// LabelsBody is the body and answer of PUT
// /v1/{stacks|clusters|releases}/{id}/labels: the resource's labels whole.
type LabelsBody struct {
	Labels map[string]string `json:"labels"`
}
