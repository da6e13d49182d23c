package providers

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// PlugsDirSetting is the setting that names the plugs directory (see
// ExternalOptions.PlugsDir), for messages.
const PlugsDirSetting = "CAIRN_PLUGS_DIR"

// extMount is a plug a program gets: the host directory, and where an
// image sees it.
type extMount struct {
	Host, Container string
	Writable        bool
}

// plugName is what a plug may be called: one path component of the plugs
// directory. The name comes from the program's answer, a claim.
var plugName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// mountPlugs finds the plugs an init answer asks for under PlugsDir: a
// required plug that is not there is an error naming it and the setting;
// an optional one is left out. An image's plug needs its container_path.
func (p *externalProvider) mountPlugs(plugs map[string]extPlug, image bool) (map[string]extMount, error) {
	names := make([]string, 0, len(plugs))
	for name := range plugs {
		names = append(names, name)
	}
	slices.Sort(names)
	out := map[string]extMount{}
	var errs []error
	for _, name := range names {
		pl := plugs[name]
		if !plugName.MatchString(name) {
			errs = append(errs, fmt.Errorf("plug name %q is not a plain name (letters, digits, _ . -)", name))
			continue
		}
		if image && !strings.HasPrefix(pl.ContainerPath, "/") {
			errs = append(errs, fmt.Errorf("plug %q: container_path must be an absolute path in the image", name))
			continue
		}
		host, err := p.plugDir(name)
		if err != nil {
			if !pl.Optional {
				errs = append(errs, err)
			}
			continue
		}
		out[name] = extMount{Host: host, Container: pl.ContainerPath, Writable: pl.Writable}
	}
	return out, errors.Join(errs...)
}

// plugDir is the host directory of plug name, which must exist.
func (p *externalProvider) plugDir(name string) (string, error) {
	if p.opts.PlugsDir == "" {
		return "", fmt.Errorf("requires plug %q: %s is not set (set it to a directory holding %s/)", name, PlugsDirSetting, name)
	}
	dir := filepath.Join(p.opts.PlugsDir, name)
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("requires plug %q: no directory %s (%s/%s)", name, dir, PlugsDirSetting, name)
	}
	return dir, nil
}

// plugVolumes are docker's mounts of the plugs: read-only unless the plug
// asked to write.
func (r *extRunner) plugVolumes() []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(r.plugs)) {
		m := r.plugs[name]
		v := m.Host + ":" + m.Container
		if !m.Writable {
			v += ":ro"
		}
		out = append(out, "-v", v)
	}
	return out
}

// plugEnv tells a program where its plugs are: CAIRN_PLUG_<NAME> (the
// name upper-cased, other characters as _) holds the host directory.
func (r *extRunner) plugEnv() []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(r.plugs)) {
		out = append(out, PlugEnvName(name)+"="+r.plugs[name].Host)
	}
	return out
}

// PlugEnvName is the variable that gives a program the directory of plug
// name.
func PlugEnvName(name string) string {
	return "CAIRN_PLUG_" + strings.Map(func(c rune) rune {
		switch {
		case c >= 'a' && c <= 'z':
			return c - 'a' + 'A'
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
			return c
		}
		return '_'
	}, name)
}
