package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/cairn-io/cairn/model"
)

func TestStackCreateListShow(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{})

	created := s.run("stack", "create", "web", "--description", "the web tier", "--url", "https://example.com/web.yaml", "-o", "json").expect(t, 0)
	var st model.StackRecord
	require.NoError(t, json.Unmarshal([]byte(created.stdout), &st), "stack create -o json:\n%s", created.stdout)
	require.NotEmpty(t, st.ID, "created stack = %+v", st)
	require.Equal(t, "web", st.Name, "created stack = %+v", st)
	require.Equal(t, "the web tier", st.Description, "created stack = %+v", st)
	require.Len(t, st.URLs, 1, "created stack = %+v", st)
	// The server has it.
	got, err := s.client.GetStack(s.ctx(), st.ID)
	require.NoError(t, err, "GET stack")
	require.Equal(t, "web", got.Name, "GET stack: %+v", got)
	s.run("stack", "create", "db").expect(t, 0).has(t, "ID", "NAME", "db")

	t.Run("list", func(t *testing.T) {
		tests := []struct {
			format string
			check  func(t *testing.T, out string)
		}{
			{"table", func(t *testing.T, out string) {
				lines := strings.Split(strings.TrimSpace(out), "\n")
				require.Len(t, lines, 3, "table:\n%s", out)
				require.True(t, strings.HasPrefix(lines[0], "ID"), "table:\n%s", out)
				require.Contains(t, lines[0], "RESOURCES", "table:\n%s", out)
				// Columns are aligned: NAME starts at the same offset on every line.
				col := strings.Index(lines[0], "NAME")
				for _, l := range lines[1:] {
					name := strings.Fields(l[col:])[0]
					if name != "web" {
						require.Equal(t, "db", name, "NAME column misaligned:\n%s", out)
					}
				}
			}},
			{"json", func(t *testing.T, out string) {
				var v struct{ Stacks []model.StackRecord }
				err := json.Unmarshal([]byte(out), &v)
				require.NoError(t, err, "json: %v\n%s", err, out)
				require.Len(t, v.Stacks, 2, "json: %v\n%s", err, out)
			}},
			{"yaml", func(t *testing.T, out string) {
				var v struct {
					Stacks []struct {
						ID        string `yaml:"id"`
						Name      string `yaml:"name"`
						CreatedAt string `yaml:"createdAt"`
					} `yaml:"stacks"`
				}
				err := yaml.Unmarshal([]byte(out), &v)
				require.NoError(t, err, "yaml: %v\n%s", err, out)
				require.Len(t, v.Stacks, 2, "yaml: %v\n%s", err, out)
				require.NotEmpty(t, v.Stacks[0].ID, "yaml: %v\n%s", err, out)
				require.NotEmpty(t, v.Stacks[0].CreatedAt, "yaml: %v\n%s", err, out)
				require.True(t, strings.HasPrefix(out, "stacks:\n  - id: "), "yaml output should be block style in the JSON field order:\n%s", out)
			}},
		}
		for _, tt := range tests {
			t.Run(tt.format, func(t *testing.T) {
				tt.check(t, s.run("stack", "list", "-o", tt.format).expect(t, 0).stdout)
			})
		}
	})

	t.Run("show", func(t *testing.T) {
		tests := []struct {
			name string
			args []string
			code int
			out  []string
			err  string
		}{
			{"by id", []string{"stack", "show", st.ID}, 0, []string{"ID:", st.ID, "Name:", "web", "the web tier", "https://example.com/web.yaml", "Resources:"}, ""},
			{"by name", []string{"stack", "show", "web"}, 0, []string{st.ID}, ""},
			{"json", []string{"stack", "show", "web", "-o", "json"}, 0, []string{`"stack_id": "` + st.ID + `"`}, ""},
			{"unknown", []string{"stack", "show", "nope"}, 1, nil, "404"},
			{"bad format", []string{"stack", "show", "web", "-o", "xml"}, 1, nil, `-o "xml": want table, json or yaml`},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := s.run(tt.args...).expect(t, tt.code).has(t, tt.out...).hasErr(t, tt.err)
				if tt.code != 0 {
					require.Empty(t, r.stdout, "a failure wrote to stdout: %s", r.stdout)
				}
			})
		}
	})

	t.Run("invalid", func(t *testing.T) {
		s.run("stack", "create", "x", "--url", "ftp://example.com/p.yaml").expect(t, 1).hasErr(t, "request: urls[0]:", "422")
	})
}

func TestTokenAndServer(t *testing.T) {
	s := newAPIServer(t, apiServerOptions{token: "s3cret-token"})
	s.stack("web")
	tests := []struct {
		name   string
		args   []string
		env    map[string]string
		code   int
		stdout string
		stderr string
	}{
		{"no token", []string{"stack", "list", "--server", s.url}, nil, 1, "", "401"},
		{"wrong token", []string{"stack", "list", "--server", s.url, "--token", "nope"}, nil, 1, "", "--token or $CAIRN_API_TOKEN"},
		{"token flag", []string{"stack", "list", "--server", s.url, "--token", "s3cret-token"}, nil, 0, "web", ""},
		{"token env", []string{"stack", "list", "--server", s.url}, map[string]string{envToken: "s3cret-token"}, 0, "web", ""},
		{"flag over env", []string{"stack", "list", "--server", s.url, "--token", "s3cret-token"}, map[string]string{envToken: "wrong"}, 0, "web", ""},
		{"server env", []string{"stack", "list"}, map[string]string{envServer: s.url, envToken: "s3cret-token"}, 0, "web", ""},
		{"bad server", []string{"stack", "list", "--server", "localhost:1"}, nil, 1, "", "want http(s)://host[:port]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(envServer, "")
			t.Setenv(envToken, "")
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			r := runCairn(t, tt.args...).expect(t, tt.code).has(t, tt.stdout).hasErr(t, tt.stderr)
			require.NotContains(t, r.stdout+r.stderr, "s3cret-token", "the token was printed")
		})
	}
}
