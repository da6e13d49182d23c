package fuellab

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"gopkg.in/yaml.v3"
)

// CommandTypes are the task types that do work on a node (Fuel's puppet
// manifests, shell commands, file copies and uploads, rsync, reboots):
// Release makes each a shell task.
var CommandTypes = []string{"puppet", "shell", "copy_files", "upload_file", "sync", "reboot"}

// droppedKeys are task fields that would run a command of their own
// (fuel-library's test_pre and test_post run Ruby checks).
var droppedKeys = []string{"test_pre", "test_post"}

// Release is fuel-library's release graph as the fleet benchmark and the
// fleet tests upload it: every deployment_*.yaml of a directory in one
// Fuel task list, each command task (CommandTypes) made `type: shell` with
// a command of the caller's and its checks dropped; stages, groups,
// skipped tasks, conditions, relations, cross dependencies and strategies
// unchanged.
type Release struct {
	// YAML is the task list.
	YAML []byte
	// Tasks counts every task, Commands those made shell tasks.
	Tasks, Commands int
}

// Trivial is the command the fleet benchmark gives every task: `true`.
func Trivial(string) string { return "true" }

// ReadRelease reads fuel-library's task files in dir (never writing
// there) and gives each command task the command cmd(task id) returns.
// Duplicate keys of a task (four in fuel-library) keep their last value,
// as Fuel's YAML reader does. Its cost is one parse of the files (about
// 200 tasks, a few milliseconds).
func ReadRelease(dir string, cmd func(task string) string) (*Release, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "deployment_*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no deployment_*.yaml in %s (fuel-library's task files)", dir)
	}
	slices.Sort(paths)
	out := &Release{}
	all := &yaml.Node{Kind: yaml.SequenceNode}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if len(doc.Content) == 0 {
			continue
		}
		seq := doc.Content[0]
		if seq.Kind != yaml.SequenceNode {
			return nil, fmt.Errorf("%s: not a list of tasks", p)
		}
		for _, task := range seq.Content {
			if task.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("%s line %d: a task is not a mapping", p, task.Line)
			}
			if rewrite(task, cmd) {
				out.Commands++
			}
			all.Content = append(all.Content, task)
			out.Tasks++
		}
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(all); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	out.YAML = b.Bytes()
	return out, nil
}

// rewrite rewrites one task mapping in place and says whether it was a
// command task.
func rewrite(task *yaml.Node, cmd func(string) string) bool {
	fields := map[string]*yaml.Node{}
	var keys []string
	for i := 0; i+1 < len(task.Content); i += 2 {
		k := task.Content[i].Value
		if _, seen := fields[k]; !seen {
			keys = append(keys, k)
		}
		fields[k] = task.Content[i+1]
	}
	typ := fields["type"]
	command := typ != nil && slices.Contains(CommandTypes, typ.Value)
	if command {
		id := ""
		if n := fields["id"]; n != nil {
			id = n.Value
		}
		fields["type"] = scalar("shell")
		fields["parameters"] = &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{scalar("cmd"), {Kind: yaml.ScalarNode, Value: cmd(id), Style: yaml.DoubleQuotedStyle}}}
		if !slices.Contains(keys, "parameters") {
			keys = append(keys, "parameters")
		}
		keys = slices.DeleteFunc(keys, func(k string) bool { return slices.Contains(droppedKeys, k) })
	}
	task.Content = task.Content[:0]
	for _, k := range keys {
		task.Content = append(task.Content, scalar(k), fields[k])
	}
	return command
}

func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }
