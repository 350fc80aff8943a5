package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// DirBytes is the apparent size of everything under dir (an engine's data
// dir), directories included, as `du -bs` reports it (docs/method.md 1.11 dbdirGB). Files that
// vanish during the walk are skipped.
func DirBytes(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path != dir {
				return nil
			}
			return err
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		total += info.Size()
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("size of %s: %w", dir, err)
	}
	return total, nil
}
