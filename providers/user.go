package providers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// userProvider manages one user of the node's account files with useradd,
// usermod, userdel and chpasswd (see accounts.go), with the attributes of Puppet's
// user type: name (the title when not given), ensure, uid, gid (a number
// or a group's name), groups (the supplementary groups, exactly), home,
// managehome, shell, comment, system and password.
//
// The password is a crypt(3) hash and must come from a secret: it is
// compared and shown only as a keyed fingerprint, and the previous hash is
// kept in State.Private for undo. Undo is state-exact: a created user is
// deleted, with the home only when the apply created it; a changed user
// gets its previous attributes and hash back; a deleted user is recreated
// unless managehome removed its home (irreversible).
type userProvider struct{}

// NewUser returns the provider of kind user.
func NewUser() Provider { return userProvider{} }

func (userProvider) Kind() string { return "user" }

var userAttrs = map[string]kinds.AttrKind{
	"name":       kinds.Namevar,
	"ensure":     kinds.Property,
	"uid":        kinds.Property,
	"gid":        kinds.Property,
	"groups":     kinds.Property,
	"home":       kinds.Property,
	"shell":      kinds.Property,
	"comment":    kinds.Property,
	"password":   kinds.Property,
	"managehome": kinds.Parameter,
	"system":     kinds.Parameter,
}

func (userProvider) Attributes() map[string]kinds.AttrKind { return userAttrs }

func (userProvider) Canonicalize(spec model.Spec) (model.Spec, error) {
	if err := checkAttrs("user", spec, userAttrs); err != nil {
		return nil, err
	}
	ensure, err := canonicalEnsure(spec, "user")
	if err != nil {
		return nil, err
	}
	out := model.Spec{"ensure": ensure}
	for _, attr := range []string{"name", "home", "shell", "comment", "password"} {
		s, ok, err := specString(spec, attr)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if err := accountField(attr, s); err != nil {
			return nil, err
		}
		switch attr {
		case "name":
			if !accountNameRE.MatchString(s) {
				return nil, configErrorf("name", "%q is not a user name", s)
			}
		case "home", "shell":
			if !path.IsAbs(s) {
				return nil, configErrorf(attr, "%q must be an absolute path", s)
			}
			s = path.Clean(s)
		}
		out[attr] = s
	}
	if uid, ok, err := specInt(spec, "uid"); err != nil {
		return nil, err
	} else if ok {
		out["uid"] = int64(uid)
	}
	if gid, ok, err := canonicalGroupRef(spec["gid"], "gid"); err != nil {
		return nil, err
	} else if ok {
		out["gid"] = gid
	}
	if v, ok := spec["groups"]; ok && v != nil {
		list, isList := v.([]any)
		if !isList {
			return nil, configErrorf("groups", "want a list of group names, got %s", nested.Describe(v))
		}
		names := make([]string, 0, len(list))
		for i, e := range list {
			s, isString := e.(string)
			if !isString || !accountNameRE.MatchString(s) {
				return nil, configErrorf(fmt.Sprintf("groups[%d]", i), "%v is not a group name", e)
			}
			names = append(names, s)
		}
		out["groups"] = sortedList(names)
	}
	for _, attr := range []string{"managehome", "system"} {
		b, err := specBool(spec, attr)
		if err != nil {
			return nil, err
		}
		if b {
			out[attr] = true
		}
	}
	return out, nil
}

// canonicalGroupRef is a gid as a number, or a group's name.
func canonicalGroupRef(v any, attr string) (any, bool, error) {
	if s, ok := v.(string); ok && s != "" && (s[0] < '0' || s[0] > '9') {
		if !accountNameRE.MatchString(s) {
			return nil, false, configErrorf(attr, "%q is not a group name", s)
		}
		return s, true, nil
	}
	n, ok, err := specInt(model.Spec{attr: v}, attr)
	return int64(n), ok, err
}

func sortedList(names []string) []any {
	slices.Sort(names)
	names = slices.Compact(names)
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = n
	}
	return out
}

// userPrivate is what undo needs beyond the attributes: the hash before
// the change (kept in the sealed before-state, never shown).
type userPrivate struct {
	Hash string `json:"hash,omitempty"`
}

// DiffValue shows the password as its keyed fingerprint, never the hash.
func (userProvider) DiffValue(env Env, want model.Spec, attr string) any {
	if s, ok := want[attr].(string); ok && attr == "password" {
		return passwordFingerprint(env, s)
	}
	return want[attr]
}

func passwordFingerprint(env Env, hash string) string {
	key := env.fingerprintKey
	if len(key) == 0 {
		key = newFingerprintKey()
	}
	return keyedDigest(key, []byte(hash))
}

// checkPasswordSecret refuses a password that is not one of the step's
// secrets: a hash written in a package would sit in its history.
func checkPasswordSecret(env Env, want model.Spec) error {
	pw, ok := want["password"].(string)
	if ok && !slices.Contains(env.Secrets, pw) {
		return configErrorf("password", "must be given as a secret ({{ secret \"…\" }}), never written in the package")
	}
	return nil
}

func (userProvider) Read(_ context.Context, env Env, want model.Spec) (State, error) {
	name, err := accountName(env, want)
	if err != nil {
		return State{}, err
	}
	if err := checkPasswordSecret(env, want); err != nil {
		return State{}, err
	}
	st, _, err := readUser(env, name, want)
	return st, err
}

// readUser reads the user's state; gid is reported as a name when want
// names the group, as a number otherwise.
func readUser(env Env, name string, want model.Spec) (State, *passwdEntry, error) {
	acc := accountsOf(env)
	u, err := acc.user(name)
	if err != nil || u == nil {
		return State{ID: name}, nil, err
	}
	gs, err := acc.groups()
	if err != nil {
		return State{}, nil, err
	}
	var gid any = int64(u.gid)
	var groups []string
	for _, g := range gs {
		if g.gid == u.gid {
			if _, byName := want["gid"].(string); byName {
				gid = g.name
			}
		}
		if slices.Contains(g.members, name) {
			groups = append(groups, g.name)
		}
	}
	hash, err := acc.passwordHash(name)
	if err != nil {
		return State{}, nil, err
	}
	attrs := map[string]any{
		"name": name, "ensure": "present", "uid": int64(u.uid), "gid": gid, "groups": sortedList(groups),
		"home": u.home, "shell": u.shell, "comment": u.comment,
	}
	if hash != "" {
		attrs["password"] = passwordFingerprint(env, hash)
	}
	private, err := json.Marshal(userPrivate{Hash: hash})
	if err != nil {
		return State{}, nil, err
	}
	return State{
		Exists:  true,
		ID:      name,
		Attrs:   attrs,
		Outputs: map[string]any{"name": name, "uid": int64(u.uid), "gid": int64(u.gid), "home": u.home},
		Private: private,
	}, u, nil
}

// Apply creates the user (useradd) or changes what differs (usermod).
func (userProvider) Apply(ctx context.Context, env Env, want model.Spec, have State) (State, error) {
	name, err := accountName(env, want)
	if err != nil {
		return State{}, err
	}
	if err := checkPasswordSecret(env, want); err != nil {
		return State{}, err
	}
	pw, _ := want["password"].(string)
	homeCreated := false
	setPassword := pw != "" && (!have.Exists || !EqualValues(have.Attrs["password"], passwordFingerprint(env, pw)))
	if !have.Exists {
		args := userArgs(want, nil)
		if want["system"] == true {
			args = append(args, "--system")
		}
		if want["managehome"] == true {
			home, _ := want["home"].(string)
			existed, err := homeExists(env, name, home)
			if err != nil {
				return State{}, err
			}
			homeCreated = !existed
			args = append(args, "--create-home")
		} else {
			args = append(args, "--no-create-home")
		}
		if args, err = numericGID(env, args); err != nil {
			return State{}, err
		}
		if err := accountTool(ctx, env, "useradd", append(args, "--", name), ""); err != nil {
			return State{}, err
		}
	} else if args := userArgs(want, have.Attrs); len(args) > 0 {
		if want["managehome"] == true && slices.Contains(args, "--home") {
			args = append(args, "--move-home")
		}
		if args, err = numericGID(env, args); err != nil {
			return State{}, err
		}
		if err := accountTool(ctx, env, "usermod", append(args, "--", name), ""); err != nil {
			return State{}, err
		}
	}
	if setPassword {
		if err := setPasswordHash(ctx, env, name, pw); err != nil {
			return State{}, err
		}
	}
	after, _, err := readUser(env, name, want)
	if err != nil {
		return State{}, err
	}
	if !after.Exists {
		return State{}, fmt.Errorf("user %s is missing after the change", name)
	}
	// The hash stays out of the state left behind: only a state before a
	// change keeps it, to restore it.
	after.Private = nil
	if homeCreated {
		after.Outputs["homeCreated"] = true
	}
	return after, nil
}

// userArgs are the useradd/usermod options setting want's attributes that
// differ from have's (all of them when have is nil), password aside.
func userArgs(want model.Spec, have map[string]any) []string {
	var args []string
	differs := func(attr string) bool {
		v, ok := want[attr]
		if !ok {
			return false
		}
		return have == nil || !EqualValues(v, have[attr])
	}
	flags := []struct{ attr, flag string }{
		{"uid", "--uid"}, {"gid", "--gid"}, {"home", "--home"}, {"shell", "--shell"}, {"comment", "--comment"},
	}
	for _, f := range flags {
		if differs(f.attr) {
			flag := f.flag
			if flag == "--home" && have == nil {
				flag = "--home-dir"
			}
			args = append(args, flag, valueText(want[f.attr]))
		}
	}
	if differs("groups") {
		var names []string
		for _, g := range want["groups"].([]any) {
			names = append(names, g.(string))
		}
		args = append(args, "--groups", strings.Join(names, ","))
	}
	return args
}

// numericGID replaces a group name after --gid in args with its number
// from the node's group file: usermod --prefix looks a name up in the
// host's groups, not the prefix's.
func numericGID(env Env, args []string) ([]string, error) {
	i := slices.Index(args, "--gid")
	if i < 0 || i+1 >= len(args) || args[i+1] == "" || args[i+1][0] >= '0' && args[i+1][0] <= '9' {
		return args, nil
	}
	g, err := accountsOf(env).group(args[i+1])
	if err != nil {
		return nil, err
	}
	if g == nil {
		return nil, fmt.Errorf("group %s does not exist", args[i+1])
	}
	args[i+1] = strconv.Itoa(g.gid)
	return args, nil
}

// valueText renders a string or a number as the tools take it.
func valueText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatInt(int64(x), 10)
	case int:
		return strconv.Itoa(x)
	default:
		return fmt.Sprint(v)
	}
}

// homeExists reports whether the home useradd would make already exists.
func homeExists(env Env, name, home string) (bool, error) {
	if home == "" {
		home = "/home/" + name
	}
	full := filepath.Join(cmpRoot(env.Node.Root), home)
	_, err := os.Lstat(full)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// Delete removes the user without its home.
func (p userProvider) Delete(ctx context.Context, env Env, have State) error {
	return p.DeleteSpec(ctx, env, nil, have)
}

// DeleteSpec removes the user (userdel); with managehome: true its home
// and mail spool go too, as Puppet's ensure: absent does.
func (userProvider) DeleteSpec(ctx context.Context, env Env, want model.Spec, have State) error {
	if have.ID == "" {
		return nil
	}
	u, err := accountsOf(env).user(have.ID)
	if err != nil || u == nil {
		return err
	}
	args := []string{"--", have.ID}
	if want["managehome"] == true {
		args = append([]string{"--remove"}, args...)
	}
	return accountTool(ctx, env, "userdel", args, "")
}

// Reversible: everything but deleting a user with its home.
func (userProvider) Reversible(want model.Spec) bool {
	return !(want["ensure"] == "absent" && want["managehome"] == true)
}

// Compensate undoes ch: a created user is deleted (its home too when the
// apply created it, as its homeCreated output says), a changed one gets its previous attributes and
// password hash back, a deleted one is recreated as it was.
func (p userProvider) Compensate(ctx context.Context, env Env, want model.Spec, ch Change) error {
	name := ch.Before.ID
	if name == "" {
		name = ch.After.ID
	}
	if name == "" {
		return nil
	}
	var before userPrivate
	if len(ch.Before.Private) > 0 {
		if err := json.Unmarshal(ch.Before.Private, &before); err != nil {
			return fmt.Errorf("previous state of user %s: %w", name, err)
		}
	}
	current, err := accountsOf(env).user(name)
	if err != nil {
		return err
	}
	if !ch.Before.Exists {
		if current == nil {
			return nil
		}
		args := []string{"--", name}
		if ch.After.Outputs["homeCreated"] == true {
			args = append([]string{"--remove"}, args...)
		}
		return accountTool(ctx, env, "userdel", args, "")
	}
	restore := model.Spec{}
	for _, attr := range []string{"uid", "gid", "groups", "home", "shell", "comment"} {
		if v, ok := ch.Before.Attrs[attr]; ok {
			restore[attr] = v
		}
	}
	if current == nil {
		args, err := numericGID(env, userArgs(restore, nil))
		if err != nil {
			return err
		}
		if err := accountTool(ctx, env, "useradd", append(append(args, "--no-create-home"), "--", name), ""); err != nil {
			return err
		}
	} else {
		args := userArgs(restore, map[string]any{})
		if want["managehome"] == true && ch.After.Outputs["home"] != nil && !EqualValues(ch.After.Outputs["home"], restore["home"]) {
			args = append(args, "--move-home")
		}
		if args, err = numericGID(env, args); err != nil {
			return err
		}
		if len(args) > 0 {
			if err := accountTool(ctx, env, "usermod", append(args, "--", name), ""); err != nil {
				return err
			}
		}
	}
	if before.Hash == "" {
		return nil
	}
	return setPasswordHash(ctx, env, name, before.Hash)
}

// setPasswordHash sets the user's hash with chpasswd --encrypted, given on
// its standard input: never on a command line, where any local process
// could read it.
func setPasswordHash(ctx context.Context, env Env, name, hash string) error {
	return accountToolInput(ctx, env, "chpasswd", []string{"--encrypted"}, name+":"+hash+"\n", hash)
}

// List lists the users with a uid of at least 1000 (people, not system
// accounts), or every user when q.Spec has system: true; by name with
// q.Names. The password is never exported.
func (userProvider) List(_ context.Context, env Env, q ListQuery) ([]Listed, error) {
	acc := accountsOf(env)
	us, err := acc.users()
	if err != nil {
		return nil, err
	}
	gs, err := acc.groups()
	if err != nil {
		return nil, err
	}
	all := q.Spec["system"] == true
	var out []Listed
	for _, u := range us {
		if !listedAccount(u.name, u.uid, all, q.Names) {
			continue
		}
		var groups []string
		for _, g := range gs {
			if slices.Contains(g.members, u.name) {
				groups = append(groups, g.name)
			}
		}
		out = append(out, Listed{Name: u.name, Spec: model.Spec{
			"name": u.name, "uid": int64(u.uid), "gid": int64(u.gid), "groups": sortedList(groups),
			"home": u.home, "shell": u.shell, "comment": u.comment,
		}})
	}
	return out, nil
}
