package providers

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/cairn-io/cairn/model"
)

// The user and unix_group kinds drive the shadow tools (useradd, usermod,
// userdel, chpasswd, groupadd, groupmod, groupdel) and read the account
// files they write. On a node with a Root the tools get --root Root (they chroot into
// it before touching a file), so they work on Root/etc/passwd,
// Root/etc/group and Root/etc/shadow and make homes under Root: a local
// node's accounts live inside it, as its files do. (--prefix would do the
// same without a chroot, but usermod --prefix looks the group of -g up in
// the host's groups, not the prefix's, in Debian 12's shadow 4.13.) On the
// control plane (Root "") they act on the host's own accounts. Only
// accounts in the files are managed: NSS sources (LDAP, sssd) are not.

// accountNameRE is what useradd accepts by default (a POSIX portable name,
// without a leading dash), so a name can never be taken for an option.
var accountNameRE = regexp.MustCompile(`^[a-z_][a-z0-9_.-]{0,31}\$?$`)

// accountName is the spec's name, or the resource's name (Puppet's title)
// when the spec gives none.
func accountName(env Env, want model.Spec) (string, error) {
	name, _ := want["name"].(string)
	if name == "" {
		name = env.ObjectID
	}
	if name == "" {
		name = env.Name
	}
	if !accountNameRE.MatchString(name) {
		return "", configErrorf("name", "%q is not an account name (lower-case letters, digits, _ . -, at most 32)", name)
	}
	return name, nil
}

// passwdEntry is one line of passwd.
type passwdEntry struct {
	name, comment, home, shell string
	uid, gid                   int
}

// groupEntry is one line of group.
type groupEntry struct {
	name    string
	gid     int
	members []string
}

// accountFiles reads a node's account files. Reading costs one pass over
// each file; nothing is cached, so every read sees the tools' last write.
type accountFiles struct{ root string }

func accountsOf(env Env) accountFiles { return accountFiles{root: env.Node.Root} }

func (a accountFiles) path(name string) string {
	return filepath.Join(cmpRoot(a.root), "etc", name)
}

func cmpRoot(root string) string {
	if root == "" {
		return "/"
	}
	return root
}

// lines returns the colon-split lines of an account file with at least n
// fields; a missing file has none.
func (a accountFiles) lines(name string, n int) ([][]string, error) {
	data, err := os.ReadFile(a.path(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	var out [][]string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "+") || strings.HasPrefix(line, "-") {
			continue
		}
		f := strings.Split(line, ":")
		if len(f) >= n {
			out = append(out, f)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return out, nil
}

func (a accountFiles) users() ([]passwdEntry, error) {
	lines, err := a.lines("passwd", 7)
	if err != nil {
		return nil, err
	}
	out := make([]passwdEntry, 0, len(lines))
	for _, f := range lines {
		uid, err1 := strconv.Atoi(f[2])
		gid, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, passwdEntry{name: f[0], uid: uid, gid: gid, comment: f[4], home: f[5], shell: f[6]})
	}
	return out, nil
}

func (a accountFiles) groups() ([]groupEntry, error) {
	lines, err := a.lines("group", 4)
	if err != nil {
		return nil, err
	}
	out := make([]groupEntry, 0, len(lines))
	for _, f := range lines {
		gid, err := strconv.Atoi(f[2])
		if err != nil {
			continue
		}
		g := groupEntry{name: f[0], gid: gid}
		if f[3] != "" {
			g.members = strings.Split(f[3], ",")
		}
		out = append(out, g)
	}
	return out, nil
}

func (a accountFiles) user(name string) (*passwdEntry, error) {
	us, err := a.users()
	if err != nil {
		return nil, err
	}
	for i := range us {
		if us[i].name == name {
			return &us[i], nil
		}
	}
	return nil, nil
}

func (a accountFiles) group(name string) (*groupEntry, error) {
	gs, err := a.groups()
	if err != nil {
		return nil, err
	}
	for i := range gs {
		if gs[i].name == name {
			return &gs[i], nil
		}
	}
	return nil, nil
}

// passwordHash is the user's hash in shadow ("" when there is no shadow
// entry). It is only ever fingerprinted or kept in State.Private.
func (a accountFiles) passwordHash(name string) (string, error) {
	lines, err := a.lines("shadow", 2)
	if err != nil {
		return "", err
	}
	for _, f := range lines {
		if f[0] == name {
			return f[1], nil
		}
	}
	return "", nil
}

// accountTool runs one shadow tool, with --root for a rooted node. args
// must not hold a secret unless secret says which value to hide: a
// failure's message never repeats it.
func accountTool(ctx context.Context, env Env, tool string, args []string, secret string) error {
	return accountToolInput(ctx, env, tool, args, "", secret)
}

// accountToolInput is accountTool with input on the tool's standard input.
func accountToolInput(ctx context.Context, env Env, tool string, args []string, input, secret string) error {
	if env.Node.Root != "" {
		args = append([]string{"--root", env.Node.Root}, args...)
	}
	cmd := exec.CommandContext(ctx, tool, args...)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"}
	if input != "" {
		cmd.Stdin = strings.NewReader(input)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if secret != "" {
			msg = strings.ReplaceAll(msg, secret, "[secret]")
		}
		if len(msg) > 2000 {
			msg = msg[:2000] + "…"
		}
		return fmt.Errorf("%s: %w: %s", tool, err, msg)
	}
	return nil
}

// specInt reads an optional non-negative integer attribute (a number or
// a string of digits, as Puppet accepts both).
func specInt(spec model.Spec, attr string) (int, bool, error) {
	v, ok := spec[attr]
	if !ok || v == nil {
		return 0, false, nil
	}
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case int:
		n = int64(x)
	case float64:
		if x != float64(int64(x)) {
			return 0, false, configErrorf(attr, "want a whole number, got %v", x)
		}
		n = int64(x)
	case string:
		p, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return 0, false, configErrorf(attr, "want a number, got %q", x)
		}
		n = p
	default:
		return 0, false, configErrorf(attr, "want a number, got %T", v)
	}
	if n < 0 || n > 1<<31-2 {
		return 0, false, configErrorf(attr, "%d out of range", n)
	}
	return int(n), true, nil
}

// specBool reads an optional boolean attribute.
func specBool(spec model.Spec, attr string) (bool, error) {
	v, ok := spec[attr]
	if !ok || v == nil {
		return false, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, configErrorf(attr, "want true or false, got %v", v)
	}
	return b, nil
}

// accountField checks a free-text field the account files store between
// colons: a colon, newline or NUL would corrupt them.
func accountField(attr, s string) error {
	if strings.ContainsAny(s, ":\n\x00") {
		return configErrorf(attr, "must not contain ':', a newline or NUL")
	}
	return nil
}
