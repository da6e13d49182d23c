package prepare

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairn-io/cairn/expr"
	"github.com/cairn-io/cairn/kinds"
	"github.com/cairn-io/cairn/model"
)

// DefaultFilesLimit is the default of Files.Limit: the most bytes one
// copy_files step reads on the control plane, all its files together.
const DefaultFilesLimit = 4 << 20

// Files is where copy_files steps read their sources on the control plane:
// Dir is their root ("" refuses copy_files), Limit bounds one step's
// sources (0 means DefaultFilesLimit).
type Files struct {
	Dir   string
	Limit int64
}

// read reads the sources of a copy_files step on the control
// plane and puts their bytes in the step's spec (files[].contentBase64),
// which the store keeps and the node's worker reads: the bytes never enter
// workflow history. Sources are absolute paths resolved inside
// f.Dir, as a node's paths inside its root (symlinks resolved, so none
// leads out), given literally (not computed at run time), and add up to at
// most f.Limit bytes. Cost: one stat and one read per file.
func (f Files) read(s *model.Step) error {
	files, _ := s.Spec["files"].([]any)
	if f.Dir == "" {
		return fmt.Errorf("%s: copy_files reads its sources on the control plane from the directory CAIRN_FILES_DIR, which is not set", s.ID)
	}
	dir, err := filepath.EvalSymlinks(f.Dir)
	if err != nil {
		return fmt.Errorf("CAIRN_FILES_DIR: %w", err)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultFilesLimit
	}
	var total int64
	out := make([]any, len(files))
	for i, item := range files {
		m, ok := item.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: files[%d]: want {src, dst}", s.ID, i)
		}
		src, ok := m["src"].(string)
		if !ok || expr.IsDynamic(m["src"]) {
			return fmt.Errorf("%s: files[%d].src: give the path literally: the control plane reads it before the step runs", s.ID, i)
		}
		data, err := readConfined(dir, src, limit-total)
		if err != nil {
			return fmt.Errorf("%s: files[%d].src: %w", s.ID, i, err)
		}
		total += int64(len(data))
		file := make(map[string]any, len(m)+1)
		for k, v := range m {
			file[k] = v
		}
		file["contentBase64"] = base64.StdEncoding.EncodeToString(data)
		out[i] = file
	}
	spec := make(map[string]any, len(s.Spec))
	for k, v := range s.Spec {
		spec[k] = v
	}
	spec["files"] = out
	s.Spec = spec
	return nil
}

// readConfined reads the regular file src, which must lie inside dir
// once symlinks are resolved, refusing more than limit bytes.
func readConfined(dir, src string, limit int64) ([]byte, error) {
	if !filepath.IsAbs(src) {
		return nil, fmt.Errorf("%q is not an absolute path", src)
	}
	// dir is the sources' root: /var/lib/fuel/keys/a reads
	// <dir>/var/lib/fuel/keys/a, and ".." cannot climb above it.
	real, err := filepath.EvalSymlinks(filepath.Join(dir, filepath.Clean(src)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such file under CAIRN_FILES_DIR", src)
	}
	if err != nil {
		return nil, err
	}
	if real != dir && !strings.HasPrefix(real, dir+string(filepath.Separator)) {
		return nil, fmt.Errorf("%s leads outside CAIRN_FILES_DIR, the only directory copy_files may read", src)
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", src)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: the files of one copy_files step are larger than CAIRN_FILES_LIMIT", src)
	}
	return data, nil
}

// isCopyFiles reports whether a step runs kind copy_files.
func isCopyFiles(s *model.Step) bool {
	return !s.Skipped && strings.EqualFold(s.Kind, kinds.KindCopyFiles) && s.Spec != nil
}
