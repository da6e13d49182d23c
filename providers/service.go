package providers

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"

	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// serviceProvider manages one systemd service over D-Bus: whether it runs
// (ensure: running or stopped) and whether it starts at boot (enable),
// Puppet's service type on systemd. It creates and deletes nothing: a
// service leaving the package is left as it is, and undo puts back the
// previous ensure and enable. It is refreshable: a resource notifying it
// (a config file) restarts it once, unless the same run starts it or it is
// to be stopped.
type serviceProvider struct {
	// address is the D-Bus address of the systemd manager's private
	// socket; "" is the system manager's, /run/systemd/private.
	address string
}

// NewService returns the provider of kind service, talking to the systemd
// manager whose private socket is at the D-Bus address (unix:path=…), or
// to the system manager when address is "". It connects per call.
func NewService(address string) Provider { return serviceProvider{address: address} }

func (serviceProvider) Kind() string { return kinds.KindService }

var serviceAttrs = map[string]kinds.AttrKind{
	"name":   kinds.Namevar,
	"ensure": kinds.Property,
	"enable": kinds.Property,
}

func (serviceProvider) Attributes() map[string]kinds.AttrKind { return serviceAttrs }

// unitNameRE is a systemd unit name: no path, no option.
var unitNameRE = regexp.MustCompile(`^[A-Za-z0-9:_.\\@-]{1,255}$`)

// serviceUnit is the unit a spec names: its name (the resource's name when
// not given), with ".service" added when it has no unit suffix.
func serviceUnit(env Env, want model.Spec) (string, error) {
	name, _ := want["name"].(string)
	if name == "" {
		name = env.ObjectID
	}
	if name == "" {
		name = env.Name
	}
	if !unitNameRE.MatchString(name) || strings.HasPrefix(name, "-") {
		return "", configErrorf("name", "%q is not a systemd unit name", name)
	}
	if !strings.Contains(name, ".") {
		name += ".service"
	}
	return name, nil
}

func (serviceProvider) Canonicalize(spec model.Spec) (model.Spec, error) {
	if err := checkAttrs(kinds.KindService, spec, serviceAttrs); err != nil {
		return nil, err
	}
	out := model.Spec{}
	if name, ok, err := specString(spec, "name"); err != nil {
		return nil, err
	} else if ok {
		if !unitNameRE.MatchString(name) || strings.HasPrefix(name, "-") {
			return nil, configErrorf("name", "%q is not a systemd unit name", name)
		}
		if !strings.Contains(name, ".") {
			name += ".service"
		}
		out["name"] = name
	}
	switch v := spec["ensure"]; v {
	case nil:
	case "running", true, "true":
		out["ensure"] = "running"
	case "stopped", false, "false":
		out["ensure"] = "stopped"
	default:
		return nil, configErrorf("ensure", "want running or stopped, got %v", v)
	}
	switch v := spec["enable"]; v {
	case nil:
	case true, "true":
		out["enable"] = true
	case false, "false":
		out["enable"] = false
	default:
		return nil, configErrorf("enable", "want true or false, got %v", v)
	}
	return out, nil
}

// connect opens a private connection to the systemd manager; the caller
// closes it.
func (p serviceProvider) connect(ctx context.Context) (*sddbus.Conn, error) {
	if p.address == "" {
		conn, err := sddbus.NewSystemdConnectionContext(ctx)
		if err != nil {
			return nil, fmt.Errorf("connect to systemd: %w", err)
		}
		return conn, nil
	}
	conn, err := sddbus.NewConnection(func() (*dbus.Conn, error) {
		c, err := dbus.Dial(p.address, dbus.WithContext(ctx))
		if err != nil {
			return nil, err
		}
		if err := c.Auth([]dbus.Auth{dbus.AuthExternal(strconv.Itoa(os.Getuid()))}); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	})
	if err != nil {
		return nil, fmt.Errorf("connect to systemd at %s: %w", p.address, err)
	}
	return conn, nil
}

func (p serviceProvider) Read(ctx context.Context, env Env, want model.Spec) (State, error) {
	unit, err := serviceUnit(env, want)
	if err != nil {
		return State{}, err
	}
	conn, err := p.connect(ctx)
	if err != nil {
		return State{}, err
	}
	defer conn.Close()
	return readService(ctx, conn, unit)
}

// readService reads the unit's states: a unit systemd cannot find is an
// error, since a service kind installs nothing.
func readService(ctx context.Context, conn *sddbus.Conn, unit string) (State, error) {
	props, err := conn.GetUnitPropertiesContext(ctx, unit)
	if err != nil {
		return State{}, fmt.Errorf("read %s: %w", unit, err)
	}
	load, _ := props["LoadState"].(string)
	if load == "not-found" {
		return State{}, fmt.Errorf("unit %s not found: install its package or unit file first", unit)
	}
	active, _ := props["ActiveState"].(string)
	fileState, _ := props["UnitFileState"].(string)
	ensure := "stopped"
	if active == "active" || active == "reloading" || active == "activating" {
		ensure = "running"
	}
	enabled := fileState == "enabled" || fileState == "enabled-runtime"
	return State{
		Exists:  true,
		ID:      unit,
		Attrs:   map[string]any{"name": unit, "ensure": ensure, "enable": enabled},
		Outputs: map[string]any{"name": unit, "activeState": active, "unitFileState": fileState},
	}, nil
}

// Apply enables or disables the unit file (then reloads the manager, as
// systemctl does) and starts or stops the unit, waiting for the job.
func (p serviceProvider) Apply(ctx context.Context, env Env, want model.Spec, have State) (State, error) {
	unit, err := serviceUnit(env, want)
	if err != nil {
		return State{}, err
	}
	conn, err := p.connect(ctx)
	if err != nil {
		return State{}, err
	}
	defer conn.Close()
	if e, ok := want["enable"].(bool); ok && !EqualValues(have.Attrs["enable"], e) {
		if e {
			_, _, err = conn.EnableUnitFilesContext(ctx, []string{unit}, false, false)
		} else {
			_, err = conn.DisableUnitFilesContext(ctx, []string{unit}, false)
		}
		if err != nil {
			return State{}, fmt.Errorf("enable %s: %v: %w", unit, e, err)
		}
		if err := conn.ReloadContext(ctx); err != nil {
			return State{}, fmt.Errorf("reload systemd: %w", err)
		}
	}
	if ens, ok := want["ensure"].(string); ok && have.Attrs["ensure"] != ens {
		job := conn.StartUnitContext
		if ens == "stopped" {
			job = conn.StopUnitContext
		}
		if err := runJob(ctx, unit, ens, job); err != nil {
			return State{}, err
		}
	}
	return readService(ctx, conn, unit)
}

// runJob queues one job for unit and waits for its result.
func runJob(ctx context.Context, unit, what string, job func(context.Context, string, string, chan<- string) (int, error)) error {
	done := make(chan string, 1)
	if _, err := job(ctx, unit, "replace", done); err != nil {
		return fmt.Errorf("%s %s: %w", what, unit, err)
	}
	select {
	case result := <-done:
		if result != "done" {
			return fmt.Errorf("%s %s: job %s (see journalctl -u %s)", what, unit, result, unit)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s %s: %w", what, unit, ctx.Err())
	}
}

// Delete leaves the service as it is: the kind never created it.
func (serviceProvider) Delete(context.Context, Env, State) error { return nil }

// RefreshAction restarts a service that runs and is to keep running,
// unless this run starts it (the start is its refresh).
func (serviceProvider) RefreshAction(want model.Spec, have State, planned model.Action) model.Action {
	if want["ensure"] == "stopped" || have.Attrs["ensure"] != "running" {
		return model.ActionNoop
	}
	return model.ActionUpdate
}

// Refresh restarts the unit and waits for the job.
func (p serviceProvider) Refresh(ctx context.Context, env Env, want model.Spec, after State) (State, error) {
	unit, err := serviceUnit(env, want)
	if err != nil {
		return after, err
	}
	conn, err := p.connect(ctx)
	if err != nil {
		return after, err
	}
	defer conn.Close()
	if err := runJob(ctx, unit, "restart", conn.RestartUnitContext); err != nil {
		return after, err
	}
	st, err := readService(ctx, conn, unit)
	if err != nil {
		return after, err
	}
	st.Outputs["restarted"] = true
	return st, nil
}

// List lists the service units systemd knows files for, by name with
// q.Names, as specs of their current ensure and enable.
func (p serviceProvider) List(ctx context.Context, env Env, q ListQuery) ([]Listed, error) {
	conn, err := p.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	patterns := []string{"*.service"}
	if len(q.Names) > 0 {
		patterns = patterns[:0]
		for _, n := range q.Names {
			unit, err := serviceUnit(env, model.Spec{"name": n})
			if err != nil {
				return nil, err
			}
			patterns = append(patterns, unit)
		}
	}
	files, err := conn.ListUnitFilesByPatternsContext(ctx, nil, patterns)
	if err != nil {
		return nil, fmt.Errorf("list unit files: %w", err)
	}
	var out []Listed
	for _, f := range files {
		unit := f.Path[strings.LastIndex(f.Path, "/")+1:]
		if strings.HasSuffix(unit, "@.service") || f.Type == "masked" || f.Type == "static" || f.Type == "alias" {
			continue
		}
		st, err := readService(ctx, conn, unit)
		if err != nil {
			continue // gone between the listing and the read
		}
		out = append(out, Listed{Name: strings.TrimSuffix(unit, ".service"), Spec: model.Spec{
			"name": unit, "ensure": st.Attrs["ensure"], "enable": st.Attrs["enable"],
		}})
	}
	return out, nil
}
