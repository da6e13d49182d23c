package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// paramsPackage reads env refs (one with a default) and variables, and has
// a file template whose own variables are no apply's.
const paramsPackage = `apiVersion: cairn/v1
kind: File
metadata: {name: site}
spec:
  path: /srv/site.conf
  content: '{{ env "SITE" }} {{ env "REGION" | default "eu" }} {{ .vars.region }} {{ vars.name }}'
---
apiVersion: cairn/v1
kind: File
metadata: {name: page}
spec:
  path: /srv/page.html
  template: '{{ .title }}'
  vars: {title: home}
`

// Validate says which variables and env refs have no value, given
// --var/--var-file and --env/--env-file as apply takes them.
func TestValidateWarnsOfMissingParameters(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"pkg.yaml":  paramsPackage,
		"vars.yaml": "name: www\n",
		"site.env":  "SITE=prod\n",
	})
	p := func(name string) string { return filepath.Join(dir, name) }
	const valid = "1 file: 2 resources: valid\n"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"nothing given", nil, valid +
			"Warning: environment references without a value here (the server's environment may have them): SITE\n" +
			"Warning: variables without a value (give them with --var or --var-file): name, region\n"},
		{"some variables", []string{"--var-file", p("vars.yaml"), "--env-file", p("site.env")}, valid +
			"Warning: variables without a value (give them with --var or --var-file): region\n"},
		{"everything", []string{"--var-file", p("vars.yaml"), "--var", "region=eu", "--env", "SITE=prod"}, valid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"validate", p("pkg.yaml")}, tt.args...)...)
			assert.Equal(t, 0, code, stderr)
			assert.Equal(t, tt.want, stdout)
		})
	}
	code, _, stderr := runCLI(t, "validate", p("pkg.yaml"), "--var", "novalue")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "--var: want KEY=VALUE")
}
