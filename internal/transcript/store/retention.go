// Copyright 2026 The agent-session-operator Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package store

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// archivedAt is when an archived transcript's name says it was archived
// (<sessionId>.jsonl.deleted.<unix>); ok is false for any other name.
func archivedAt(name string) (time.Time, bool) {
	i := strings.LastIndex(name, fileSuffix+deletedSuffix)
	if i <= 0 {
		return time.Time{}, false
	}
	unix, err := strconv.ParseInt(name[i+len(fileSuffix+deletedSuffix):], 10, 64)
	if err != nil || unix < 0 {
		return time.Time{}, false
	}
	return time.Unix(unix, 0), true
}

// PruneArchived removes the archived transcripts archived more than retention ago and
// returns how many it removed. Archived transcripts are never read again by the store; they
// are kept only for people, so without a retention a busy namespace fills the volume.
// retention <= 0 keeps them all.
func (st *FileStore) PruneArchived(retention time.Duration) (int, error) {
	if retention <= 0 {
		return 0, nil
	}
	cutoff := st.opts.clock.Now().Add(-retention)
	nsDirs, err := os.ReadDir(st.root)
	if err != nil {
		return 0, err
	}
	removed := 0
	var errs []error
	for _, ns := range nsDirs {
		if !ns.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(st.root, ns.Name()))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, f := range files {
			at, ok := archivedAt(f.Name())
			if !ok || f.IsDir() || !at.Before(cutoff) {
				continue
			}
			if err := os.Remove(filepath.Join(st.root, ns.Name(), f.Name())); err != nil && !os.IsNotExist(err) {
				errs = append(errs, err)
				continue
			}
			removed++
		}
	}
	return removed, errors.Join(errs...)
}
