package providers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// rebootProvider reboots a node (Fuel's reboot task) and waits up to
// timeout for its agent to come back. It works through the worker's
// restart rather than around it:
//
//  1. it records, in a marker file on the node (/var/lib/cairn/reboot/,
//     inside the node's root), the boot id of the worker serving the node
//     (Host.Boot) and the deadline;
//  2. it reboots: the configured command (CAIRN_REBOOT_COMMAND, default
//     `shutdown -r now`, run with sh -c) or, on a local node of the
//     development cluster, Host.Restart, which restarts that node's worker;
//  3. it waits. The reboot stops the worker, which hands the step back to
//     Temporal; the step runs again on the worker that comes back, finds
//     the marker with another boot id, and succeeds, or fails when the
//     node came back after the deadline. A command that does not reboot
//     makes the step fail when the timeout ends.
//
// A reboot cannot be undone: it is irreversible, and a dry-run only says
// it would run.
type rebootProvider struct {
	command string
}

// NewReboot returns the provider of kind reboot; command is what reboots
// an agent's host ("" means "shutdown -r now").
func NewReboot(command string) Provider {
	if command == "" {
		command = DefaultRebootCommand
	}
	return rebootProvider{command: command}
}

// DefaultRebootCommand reboots a Linux host.
const DefaultRebootCommand = "shutdown -r now"

// defaultRebootTimeout is how long a reboot waits without a timeout.
const defaultRebootTimeout = 5 * time.Minute

// rebootDir holds the markers of reboots in progress, on the node.
const rebootDir = "/var/lib/cairn/reboot"

func (rebootProvider) Kind() string { return kinds.KindReboot }

var rebootAttrs = map[string]kinds.AttrKind{"timeout": kinds.Parameter}

func (rebootProvider) Attributes() map[string]kinds.AttrKind { return rebootAttrs }

// Canonicalize turns timeout into a duration string.
func (rebootProvider) Canonicalize(spec model.Spec) (model.Spec, error) {
	if err := checkAttrs(kinds.KindReboot, spec, rebootAttrs); err != nil {
		return nil, err
	}
	timeout := defaultRebootTimeout
	if v := spec["timeout"]; v != nil {
		var err error
		if timeout, err = CanonicalDuration(v); err != nil || timeout <= 0 {
			return nil, configErrorf("timeout", "want a positive duration, got %v", v)
		}
	}
	return model.Spec{"timeout": timeout.String()}, nil
}

// rebootMarker is what a reboot in progress left on the node.
type rebootMarker struct {
	Boot     string    `json:"boot"`
	Started  time.Time `json:"started"`
	Deadline time.Time `json:"deadline"`
}

// markerPath is the marker of this step on the node.
func markerPath(env Env) (string, error) {
	key := env.Intent
	if key == "" {
		key = env.Name
	}
	sum := sha256.Sum256([]byte(key))
	return env.Node.Resolve(filepath.Join(rebootDir, hex.EncodeToString(sum[:16])))
}

// Read reports a reboot this step started: Outputs.rebootedAfter once the
// node came back, Outputs.waiting while the same worker still runs.
func (rebootProvider) Read(_ context.Context, env Env, _ model.Spec) (State, error) {
	m, err := readMarker(env)
	if err != nil || m == nil {
		return State{}, err
	}
	if boot(env) != m.Boot {
		return State{Outputs: map[string]any{"rebootedAfter": time.Since(m.Started).Round(time.Second).String()}}, nil
	}
	return State{Outputs: map[string]any{"waiting": m.Deadline.Format(time.RFC3339)}}, nil
}

func readMarker(env Env) (*rebootMarker, error) {
	path, err := markerPath(env)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reboot marker: %w", err)
	}
	var m rebootMarker
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("reboot marker %s: %w", path, err)
	}
	return &m, nil
}

func boot(env Env) string {
	if env.Node.Host == nil {
		return ""
	}
	return env.Node.Host.Boot
}

// Plan always runs: every execution of a reboot task reboots.
func (rebootProvider) Plan(model.Spec, State) model.Action { return model.ActionRun }

// Apply reboots and waits (see the type's comment).
func (x rebootProvider) Apply(ctx context.Context, env Env, want model.Spec, _ State) (State, error) {
	if env.Node.Host == nil {
		return State{}, configErrorf("", "reboot runs on nodes only, not on the control plane")
	}
	path, err := markerPath(env)
	if err != nil {
		return State{}, err
	}
	m, err := readMarker(env)
	if err != nil {
		return State{}, err
	}
	if m != nil && m.Boot != boot(env) {
		_ = os.Remove(path)
		took := time.Since(m.Started).Round(time.Second)
		if time.Now().After(m.Deadline) {
			return State{}, fmt.Errorf("node %s came back after %s, past its timeout of %s", env.Node.Name, took, want["timeout"])
		}
		return State{Exists: true, Outputs: map[string]any{"rebootedAfter": took.String()}}, nil
	}
	if m == nil {
		timeout, _ := time.ParseDuration(want["timeout"].(string))
		now := time.Now().UTC()
		m = &rebootMarker{Boot: boot(env), Started: now, Deadline: now.Add(timeout)}
		if err := writeMarker(path, m); err != nil {
			return State{}, err
		}
		if err := x.reboot(ctx, env); err != nil {
			_ = os.Remove(path)
			return State{}, err
		}
	}
	// Wait for the worker to be stopped by the reboot: the step is then
	// handed back and completes on the worker that comes back.
	wait := time.Until(m.Deadline)
	t := time.NewTimer(max(wait, 0))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return State{}, fmt.Errorf("waiting for node %s to reboot: %w", env.Node.Name, context.Cause(ctx))
	case <-t.C:
		_ = os.Remove(path)
		return State{}, fmt.Errorf("node %s did not reboot within %s", env.Node.Name, want["timeout"])
	}
}

// reboot restarts the node's worker (local nodes) or runs the command.
func (x rebootProvider) reboot(ctx context.Context, env Env) error {
	if env.Node.Host.Restart != nil {
		env.Node.Host.Restart()
		return nil
	}
	res, err := runCommand(ctx, command{Argv: []string{"/bin/sh", "-c", x.command}, Env: commandEnv(env.Node, nil), Timeout: time.Minute})
	if err != nil {
		return fmt.Errorf("reboot command: %w", err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("reboot command %q exited %d%s", x.command, res.ExitCode, stderrHint(res.Stderr))
	}
	return nil
}

func writeMarker(path string, m *rebootMarker) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("reboot marker: %w", err)
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return fmt.Errorf("reboot marker: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("reboot marker: %w", err)
	}
	return nil
}

// Delete has nothing to remove.
func (rebootProvider) Delete(context.Context, Env, State) error { return nil }

// Reversible: a reboot cannot be undone.
func (rebootProvider) Reversible(model.Spec) bool { return false }

// Compensate reports that a reboot that ran cannot be undone.
func (rebootProvider) Compensate(_ context.Context, env Env, _ model.Spec, ch Change) error {
	if ch.Action != model.ActionRun {
		return nil
	}
	return fmt.Errorf("reboot of node %s: %w", env.Node.Name, ErrIrreversible)
}
