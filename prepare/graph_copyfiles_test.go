package prepare

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cairn-io/cairn/model"
)

func TestReadCopyFilesConfined(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "var/lib/fuel/keys"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "var/lib/fuel/keys/nova.pub"), []byte("PUB"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big"), []byte(strings.Repeat("x", 64)), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "shadow"), []byte("secret"), 0o600))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "out")))
	require.NoError(t, os.Symlink("var/lib/fuel/keys", filepath.Join(dir, "keys")))

	step := func(src any) *model.Step {
		return &model.Step{ID: "copy@n1", Kind: "copy_files", Spec: model.Spec{
			"files": []any{map[string]any{"src": src, "dst": "/x"}}, "permissions": "0600",
		}}
	}
	tests := []struct {
		name    string
		dir     string
		src     any
		want    string // the content read, or
		wantErr string // the error
	}{
		{"inside the root", dir, "/var/lib/fuel/keys/nova.pub", "PUB", ""},
		{"through a symlink that stays inside", dir, "/keys/nova.pub", "PUB", ""},
		{"dot-dot cannot climb", dir, "/../../var/lib/fuel/keys/nova.pub", "PUB", ""},
		{"a symlink out", dir, "/out/shadow", "", "leads outside CAIRN_FILES_DIR"},
		{"missing", dir, "/etc/shadow", "", "no such file under CAIRN_FILES_DIR"},
		{"relative", dir, "etc/shadow", "", "is not an absolute path"},
		{"a directory", dir, "/var", "", "is not a regular file"},
		{"too large", dir, "/big", "", "larger than CAIRN_FILES_LIMIT"},
		{"computed at run time", dir, "{{ .deps.x.path }}", "", "give the path literally"},
		{"no files directory", "", "/var/lib/fuel/keys/nova.pub", "", "CAIRN_FILES_DIR, which is not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := step(tt.src)
			err := Files{Dir: tt.dir, Limit: 32}.read(s)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			f := s.Spec["files"].([]any)[0].(map[string]any)
			got, err := base64.StdEncoding.DecodeString(f["contentBase64"].(string))
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			assert.Equal(t, "/x", f["dst"])
			assert.Equal(t, "0600", s.Spec["permissions"])
		})
	}
}
