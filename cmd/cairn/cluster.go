package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/client"
)

func newClusterCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Work with clusters (Fuel's environments)",
	}
	settings := &cobra.Command{
		Use:   "settings",
		Short: "Show and edit a cluster's settings tree (the target of settings: conditions and placeholders)",
	}
	settings.AddCommand(newSettingsShowCmd(a), newSettingsSetCmd(a))
	cmd.AddCommand(settings, newClusterNodesCmd(a), newApprovalsCmd(a, "cluster", client.ClusterApprovals, clusterIDOf))
	return cmd
}

func newSettingsShowCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "show CLUSTER",
		Short:   "Print a cluster's settings (YAML by default, -o json)",
		Example: "  cairn cluster settings show env-1 -o json",
		Args:    cobra.ExactArgs(1),
	}
	r := newRemote(a, cmd, formatYAML)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := r.client()
		if err != nil {
			return err
		}
		settings, err := c.ClusterSettings(cmd.Context(), args[0])
		if err != nil {
			return apiFailure(a, err, nil)
		}
		return printSettings(r, settings)
	}
	return cmd
}

func newSettingsSetCmd(a *app) *cobra.Command {
	var (
		file    string
		replace bool
	)
	cmd := &cobra.Command{
		Use:   "set CLUSTER [PATH=VALUE]... [--file FILE [--replace]]",
		Short: "Change a cluster's settings: values by dotted path, or a YAML/JSON file",
		Long: "Set changes the settings named and keeps the others (a JSON merge patch): each\n" +
			"PATH=VALUE sets the value at a dotted path (VALUE is read as YAML: 3, true, [a, b],\n" +
			"{k: v}, null removes the key; quote it to keep a string), and --file merges a YAML\n" +
			"or JSON object the same way. With --replace the file becomes the whole settings tree.\n" +
			"It prints the settings as stored.",
		Example: "  cairn cluster settings set env-1 public_ssl.hostname=cloud.example.com master_ip=10.20.0.2\n" +
			"  cairn cluster settings set env-1 --file settings.yaml --replace",
		Args: cobra.MinimumNArgs(1),
	}
	r := newRemote(a, cmd, formatYAML)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		cluster, assigns := args[0], args[1:]
		if replace && (file == "" || len(assigns) > 0) {
			return fmt.Errorf("--replace takes --file and no PATH=VALUE")
		}
		if file == "" && len(assigns) == 0 {
			return fmt.Errorf("give PATH=VALUE arguments or --file")
		}
		patch := map[string]any{}
		if file != "" {
			m, err := readSettingsFile(file)
			if err != nil {
				return err
			}
			patch = m
		}
		for _, as := range assigns {
			if err := assignPath(patch, as); err != nil {
				return err
			}
		}
		c, err := r.client()
		if err != nil {
			return err
		}
		var settings map[string]any
		if replace {
			settings, err = c.ReplaceClusterSettings(cmd.Context(), cluster, patch)
		} else {
			settings, err = c.PatchClusterSettings(cmd.Context(), cluster, patch)
		}
		if err != nil {
			return apiFailure(a, err, nil)
		}
		return printSettings(r, settings)
	}
	f := cmd.Flags()
	f.StringVar(&file, "file", "", "a YAML or JSON `FILE` holding an object (- for stdin)")
	f.BoolVar(&replace, "replace", false, "with --file: replace the whole settings tree")
	return cmd
}

// printSettings prints settings as YAML (also for -o table) or JSON.
func printSettings(r *remote, settings map[string]any) error {
	if settings == nil {
		settings = map[string]any{}
	}
	format := r.out.format
	if format == formatTable {
		format = formatYAML
	}
	return printData(r.a.stdout, format, settings)
}

// readSettingsFile reads a YAML or JSON object.
func readSettingsFile(name string) (map[string]any, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, fmt.Errorf("read settings: %w", err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if m == nil {
		return nil, fmt.Errorf("%s: want an object of settings", name)
	}
	return m, nil
}

// assignPath sets PATH=VALUE in patch, creating the objects on the way.
func assignPath(patch map[string]any, assign string) error {
	path, raw, ok := strings.Cut(assign, "=")
	if !ok || path == "" {
		return fmt.Errorf("%q: want PATH=VALUE", assign)
	}
	var value any
	if err := yaml.Unmarshal([]byte(raw), &value); err != nil {
		return fmt.Errorf("%q: value: %w", assign, err)
	}
	keys := strings.Split(path, ".")
	m := patch
	for i, k := range keys {
		if k == "" {
			return fmt.Errorf("%q: empty key in path %q", assign, path)
		}
		if i == len(keys)-1 {
			m[k] = value
			break
		}
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	return nil
}
