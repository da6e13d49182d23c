package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"gopkg.in/yaml.v3"
)

// fleetCommandTypes are the task types that do work on a node (Fuel's
// puppet manifests, shell commands, file copies and uploads, rsync): the
// fleet shape makes each a shell task running `true`.
var fleetCommandTypes = []string{"puppet", "shell", "copy_files", "upload_file", "sync", "reboot"}

// fleetDroppedKeys are task fields that would run a command of their own
// (fuel-library's test_pre and test_post run Ruby checks).
var fleetDroppedKeys = []string{"test_pre", "test_post"}

// fleetRelease is fuel-library's release graph as the fleet shape uploads
// it: every deployment_*.yaml of dir in one Fuel task list, each command
// task made `type: shell` with `parameters: {cmd: "true"}` and its checks
// dropped; stages, groups, skipped tasks, conditions, relations, cross
// dependencies and strategies unchanged. It reads dir and writes nothing;
// commands counts the tasks made trivial. Duplicate keys of a task (four
// in fuel-library) keep their last value, as Fuel's YAML reader does.
type fleetRelease struct {
	yaml           []byte
	tasks, command int
}

func readFleetRelease(dir string) (*fleetRelease, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "deployment_*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no deployment_*.yaml in %s (fuel-library's task files; see -fleet-library)", dir)
	}
	slices.Sort(paths)
	out := &fleetRelease{}
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
			if trivialize(task) {
				out.command++
			}
			all.Content = append(all.Content, task)
			out.tasks++
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
	out.yaml = b.Bytes()
	return out, nil
}

// trivialize rewrites one task mapping in place and says whether it was a
// command task.
func trivialize(task *yaml.Node) bool {
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
	command := typ != nil && slices.Contains(fleetCommandTypes, typ.Value)
	if command {
		fields["type"] = scalar("shell")
		fields["parameters"] = &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{scalar("cmd"), {Kind: yaml.ScalarNode, Value: "true", Style: yaml.DoubleQuotedStyle}}}
		if !slices.Contains(keys, "parameters") {
			keys = append(keys, "parameters")
		}
		keys = slices.DeleteFunc(keys, func(k string) bool { return slices.Contains(fleetDroppedKeys, k) })
	}
	task.Content = task.Content[:0]
	for _, k := range keys {
		task.Content = append(task.Content, scalar(k), fields[k])
	}
	return command
}

func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }
