package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/model"
)

// platformFlags say where an export by kinds lists objects no stack
// manages, and which of them by platform id.
type platformFlags struct {
	ids                   []string
	url, path, specFile   string
	linksPath, linksField string
	program               []string
	headers, config       []string
	env, secrets          []string
	envFile, secretsFile  string
}

func (p *platformFlags) register(f *pflag.FlagSet) {
	f.StringArrayVar(&p.ids, "id", nil, "with --kind, or as `KIND:ID`: only the object of this platform id (an http object's id, an external instance's); repeatable")
	f.StringVar(&p.url, "url", "", "http: the API's base URL to list in")
	f.StringVar(&p.path, "path", "", "http: the collection path to list (GET URL+PATH)")
	f.StringArrayVar(&p.headers, "header", nil, "http: `NAME=VALUE` header of the listing, kept in the exported resources (a value may be {{ secret \"K\" }} or {{ env \"K\" }}); repeatable")
	f.StringVar(&p.linksPath, "links-path", "", "http: where each object lists its labels (e.g. /labels): exports the links, and --label filters by them")
	f.StringVar(&p.linksField, "links-field", "labelID", "http: with --links-path, the field a link is posted with")
	f.StringArrayVar(&p.program, "program", nil, "external: the program (then its arguments, one flag each) whose list operation lists instances")
	f.StringArrayVar(&p.config, "config", nil, "external: `KEY=VALUE` of the config sent to the program's list operation; repeatable")
	f.StringVar(&p.specFile, "spec-file", "", "YAML or JSON spec saying where to list (any kind's attributes, refs allowed); flags above override its fields")
	f.StringArrayVar(&p.env, "env", nil, "KEY=VALUE: value of env ref KEY in the spec, for this listing only (repeatable)")
	f.StringVar(&p.envFile, "env-file", "", "file of KEY=VALUE lines for env refs; --env wins over it")
	f.StringArrayVar(&p.secrets, "secret", nil, "KEY=VALUE: secret KEY of the spec, for this listing only, never stored (repeatable; prefer --secrets-file)")
	f.StringVar(&p.secretsFile, "secrets-file", "", "file of KEY=VALUE lines for secrets; --secret wins over it")
}

// apply fills the request's kinds and the selector from the flags: KIND:ID
// ids add their kind, the spec comes from --spec-file and the flags.
func (p *platformFlags) apply(req *model.ExportRequest, sel *model.ExportSelector) error {
	for _, given := range p.ids {
		id := given
		kind, rest, ok := strings.Cut(id, ":")
		if ok && kind != "" && !strings.Contains(kind, "/") {
			if !slices.ContainsFunc(req.Kinds, func(k string) bool { return strings.EqualFold(k, kind) }) {
				req.Kinds = append(req.Kinds, kind)
			}
			id = rest
		}
		if id == "" {
			return fmt.Errorf("--id %q: want ID or KIND:ID", given)
		}
		sel.IDs = append(sel.IDs, id)
	}
	spec := model.Spec{}
	if p.specFile != "" {
		data, err := os.ReadFile(p.specFile)
		if err != nil {
			return fmt.Errorf("--spec-file: %w", err)
		}
		if err := yaml.Unmarshal(data, &spec); err != nil {
			return fmt.Errorf("--spec-file %s: %w", p.specFile, err)
		}
	}
	if p.url != "" {
		spec["url"] = p.url
	}
	if p.path != "" {
		spec["path"] = p.path
	}
	if p.linksPath != "" {
		spec["links"] = map[string]any{"path": p.linksPath, "field": p.linksField, "ids": []any{}}
	}
	if len(p.program) > 0 {
		argv := make([]any, len(p.program))
		for i, a := range p.program {
			argv[i] = a
		}
		spec["program"] = argv
	}
	if err := setPairs(spec, "headers", "--header", p.headers); err != nil {
		return err
	}
	if len(p.program) > 0 || len(p.config) > 0 {
		if _, ok := spec["config"]; !ok {
			spec["config"] = map[string]any{}
		}
	}
	if err := setPairs(spec, "config", "--config", p.config); err != nil {
		return err
	}
	if len(spec) > 0 {
		sel.Spec = spec
	}
	var err error
	if sel.EnvRefs, err = paramValues("--env", p.envFile, p.env); err != nil {
		return err
	}
	if sel.Secrets, err = paramValues("--secret", p.secretsFile, p.secrets); err != nil {
		return err
	}
	return nil
}

// setPairs sets NAME=VALUE pairs into the object spec[field].
func setPairs(spec model.Spec, field, flag string, pairs []string) error {
	if len(pairs) == 0 {
		return nil
	}
	m, _ := spec[field].(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	for _, kv := range pairs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("%s %q: want NAME=VALUE", flag, kv)
		}
		m[k] = v
	}
	spec[field] = m
	return nil
}
