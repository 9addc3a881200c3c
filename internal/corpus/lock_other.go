//go:build !unix

package corpus

import (
	"errors"
	"fmt"
)

// lockFile is not implemented where flock is missing; the corpus is only
// built on Unix systems.
func lockFile(path string) (func(), error) {
	return nil, fmt.Errorf("locking %s: %w", path, errors.ErrUnsupported)
}
