package graphs

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/internal/nested"
	"github.com/cairn-io/cairn/model"
)

// Fuel's task lifecycle fields. They are kept in Task.Extra (so layers
// merge and marshal them like any field) and read with TaskLifecycle.
const (
	FieldTestPre     = "test_pre"
	FieldTestPost    = "test_post"
	FieldReexecuteOn = "reexecute_on"
	FieldRefreshOn   = "refresh_on"
)

// RefreshAny in refresh_on refreshes a task on any event.
const RefreshAny = "*"

// Lifecycle is what a task's lifecycle fields say.
type Lifecycle struct {
	// TestPre runs before the task on its node: exit 0 means already done.
	TestPre *model.TaskCheck
	// TestPost runs after the task: a non-zero exit fails it.
	TestPost *model.TaskCheck
	// ReexecuteOn names the events (deploy_changes, …) on which the task
	// runs again on a node where it already ran.
	ReexecuteOn []string
	// RefreshOn names the configuration resources (nova_config, …; "*" for
	// any) on whose event the task runs again where it already ran.
	RefreshOn []string
}

// RerunsOn reports whether one of the named events runs the task again on
// a node where it already ran: an event of reexecute_on, or of refresh_on
// (where "*" takes any event).
func (l Lifecycle) RerunsOn(events []string) bool {
	for _, e := range events {
		if slices.Contains(l.ReexecuteOn, e) || slices.Contains(l.RefreshOn, e) || slices.Contains(l.RefreshOn, RefreshAny) {
			return true
		}
	}
	return false
}

// TaskLifecycle reads a task's lifecycle fields from its Extra. Parsed
// documents were checked already (with positions); a task built in code
// may still hold a wrong shape, which is an error naming the field.
func TaskLifecycle(t *model.Task) (Lifecycle, error) {
	var l Lifecycle
	var err error
	if l.TestPre, err = checkValue(t.Extra[FieldTestPre], FieldTestPre); err != nil {
		return l, err
	}
	if l.TestPost, err = checkValue(t.Extra[FieldTestPost], FieldTestPost); err != nil {
		return l, err
	}
	if l.ReexecuteOn, err = eventsValue(t.Extra[FieldReexecuteOn], FieldReexecuteOn); err != nil {
		return l, err
	}
	if l.RefreshOn, err = eventsValue(t.Extra[FieldRefreshOn], FieldRefreshOn); err != nil {
		return l, err
	}
	return l, nil
}

func checkValue(v any, field string) (*model.TaskCheck, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: expected {cmd, timeout}, got %T", field, v)
	}
	c := &model.TaskCheck{}
	for k, x := range m {
		switch k {
		case "cmd":
			s, ok := x.(string)
			if !ok || strings.TrimSpace(s) == "" {
				return nil, fmt.Errorf("%s.cmd: expected a non-empty command", field)
			}
			c.Cmd = s
		case "timeout":
			n, ok := wholeNumber(x)
			if !ok || n <= 0 {
				return nil, fmt.Errorf("%s.timeout: expected a positive number of seconds", field)
			}
			c.Timeout = n
		default:
			return nil, fmt.Errorf("%s: unknown field %q (want cmd, timeout)", field, k)
		}
	}
	if c.Cmd == "" {
		return nil, fmt.Errorf("%s.cmd: missing command", field)
	}
	return c, nil
}

func wholeNumber(v any) (int, bool) {
	switch x := v.(type) {
	case int64:
		return int(x), x <= math.MaxInt32
	case int:
		return x, true
	case float64:
		return int(x), x == math.Trunc(x) && x <= math.MaxInt32
	}
	return 0, false
}

func eventsValue(v any, field string) ([]string, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		return []string{x}, nil
	case []string:
		return x, nil
	case []any:
		out := make([]string, 0, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok || s == "" {
				return nil, fmt.Errorf("%s[%d]: expected an event name", field, i)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: expected a list of event names, got %T", field, v)
}

// lifecycleField checks a lifecycle field of a task document where it is
// written, so a wrong shape is reported with its line. The value is kept
// in Extra by the caller.
func (p *parser) lifecycleField(d *document, key string, n *yaml.Node, path string) {
	switch key {
	case FieldTestPre, FieldTestPost:
		if n.Kind != yaml.MappingNode {
			p.c.add(d.pos(n), path, "expected {cmd: COMMAND, timeout: SECONDS}, got %s", describe(n))
			return
		}
		hasCmd := false
		fields(n, func(k string, kn, v *yaml.Node) {
			fp := nested.Key(path, k)
			switch k {
			case "cmd":
				hasCmd = true
				if s, ok := p.str(d, v, fp); ok && strings.TrimSpace(s) == "" {
					p.c.add(d.pos(v), fp, "empty command")
				}
				p.placeholders(d, v, fp)
			case "timeout":
				if t, ok := p.integer(d, v, fp); ok && t <= 0 {
					p.c.add(d.pos(v), fp, "timeout must be a positive number of seconds, got %d", t)
				}
			default:
				p.unknownField(d, kn, path, k, []string{"cmd", "timeout"})
			}
		})
		if !hasCmd {
			p.c.add(d.pos(n), nested.Key(path, "cmd"), "missing command")
		}
	case FieldReexecuteOn, FieldRefreshOn:
		list, _ := p.strList(d, n, path, true)
		for i, e := range list {
			if e == "" {
				p.c.add(d.pos(n), nested.Index(path, i), "empty event name")
			}
		}
	}
}

// isLifecycleField reports whether key is one of Fuel's lifecycle fields.
func isLifecycleField(key string) bool {
	switch key {
	case FieldTestPre, FieldTestPost, FieldReexecuteOn, FieldRefreshOn:
		return true
	}
	return false
}
