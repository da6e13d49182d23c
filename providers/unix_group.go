package providers

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// unixGroupProvider manages one group of the node's account files with
// groupadd, groupmod and groupdel (see accounts.go). Its attributes are
// Puppet's group type's: name (the title when not given), ensure, gid and
// system. Undo is state-exact: a created group is deleted, a changed gid
// is set back.
type unixGroupProvider struct{}

// NewUnixGroup returns the provider of kind unix_group.
func NewUnixGroup() Provider { return unixGroupProvider{} }

// KindUnixGroup is the kind of a system group. Fuel's task type "group"
// (a structural kind ordering tasks) holds the name group.
const KindUnixGroup = kinds.KindUnixGroup

func (unixGroupProvider) Kind() string { return KindUnixGroup }

var unixGroupAttrs = map[string]kinds.AttrKind{
	"name":   kinds.Namevar,
	"ensure": kinds.Property,
	"gid":    kinds.Property,
	"system": kinds.Parameter,
}

func (unixGroupProvider) Attributes() map[string]kinds.AttrKind { return unixGroupAttrs }

func (unixGroupProvider) Canonicalize(spec model.Spec) (model.Spec, error) {
	if err := checkAttrs(KindUnixGroup, spec, unixGroupAttrs); err != nil {
		return nil, err
	}
	ensure, err := canonicalEnsure(spec, KindUnixGroup)
	if err != nil {
		return nil, err
	}
	out := model.Spec{"ensure": ensure}
	if name, ok, err := specString(spec, "name"); err != nil {
		return nil, err
	} else if ok {
		if !accountNameRE.MatchString(name) {
			return nil, configErrorf("name", "%q is not a group name", name)
		}
		out["name"] = name
	}
	if gid, ok, err := specInt(spec, "gid"); err != nil {
		return nil, err
	} else if ok {
		out["gid"] = int64(gid)
	}
	if sys, err := specBool(spec, "system"); err != nil {
		return nil, err
	} else if sys {
		out["system"] = true
	}
	return out, nil
}

func (unixGroupProvider) Read(_ context.Context, env Env, want model.Spec) (State, error) {
	name, err := accountName(env, want)
	if err != nil {
		return State{}, err
	}
	g, err := accountsOf(env).group(name)
	if err != nil || g == nil {
		return State{ID: name}, err
	}
	return groupState(*g), nil
}

func groupState(g groupEntry) State {
	return State{
		Exists:  true,
		ID:      g.name,
		Attrs:   map[string]any{"name": g.name, "ensure": "present", "gid": int64(g.gid)},
		Outputs: map[string]any{"name": g.name, "gid": int64(g.gid), "members": slices.Clone(g.members)},
	}
}

// Apply creates the group (groupadd) or changes its gid (groupmod).
func (p unixGroupProvider) Apply(ctx context.Context, env Env, want model.Spec, have State) (State, error) {
	name, err := accountName(env, want)
	if err != nil {
		return State{}, err
	}
	gid, hasGID := want["gid"].(int64)
	var args []string
	tool := "groupmod"
	if !have.Exists {
		tool = "groupadd"
		if want["system"] == true {
			args = append(args, "--system")
		}
	}
	if hasGID && (!have.Exists || !EqualValues(have.Attrs["gid"], gid)) {
		args = append(args, "--gid", strconv.FormatInt(gid, 10))
	}
	if have.Exists && len(args) == 0 {
		return have, nil
	}
	if err := accountTool(ctx, env, tool, append(args, "--", name), ""); err != nil {
		return State{}, err
	}
	after, err := p.Read(ctx, env, model.Spec{"name": name})
	if err != nil {
		return State{}, err
	}
	if !after.Exists {
		return State{}, fmt.Errorf("%s reported success but group %s is missing", tool, name)
	}
	return after, nil
}

// Delete removes the group (groupdel); one already gone is fine. A group
// that is some user's primary group is refused by groupdel.
func (unixGroupProvider) Delete(ctx context.Context, env Env, have State) error {
	if have.ID == "" {
		return nil
	}
	g, err := accountsOf(env).group(have.ID)
	if err != nil || g == nil {
		return err
	}
	return accountTool(ctx, env, "groupdel", []string{"--", have.ID}, "")
}

// List lists the groups with a gid of at least 1000 (the ones people
// make), or every group when q.Spec has system: true; by name with
// q.Names.
func (unixGroupProvider) List(_ context.Context, env Env, q ListQuery) ([]Listed, error) {
	gs, err := accountsOf(env).groups()
	if err != nil {
		return nil, err
	}
	all := q.Spec["system"] == true
	var out []Listed
	for _, g := range gs {
		if !listedAccount(g.name, g.gid, all, q.Names) {
			continue
		}
		out = append(out, Listed{Name: g.name, Spec: model.Spec{"name": g.name, "gid": int64(g.gid)}})
	}
	return out, nil
}

// listedAccount reports whether an account is exported: named in names
// when given, else a regular one (id 1000 up to nobody's 65534,
// excluded) unless all.
func listedAccount(name string, id int, all bool, names []string) bool {
	if len(names) > 0 {
		return slices.Contains(names, name)
	}
	return all || id >= 1000 && id != 65534
}
