//go:build !linux

package transcript

import "os"

func datasync(f *os.File) error { return f.Sync() }
