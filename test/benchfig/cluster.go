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

package benchfig

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/agent-sessions/agent-session-operator/internal/devcluster"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// StartCluster builds the manager and the transcript-store and starts a local cluster (API
// server, etcd, both as their own processes) logging to logName in the temp directory; stop
// ends it and removes what it made. Of o, only the process flags are used.
func StartCluster(ctx context.Context, logName string, o devcluster.Options) (*devcluster.Cluster, func(), error) {
	var cleanup []func()
	stop := func() {
		for i := len(cleanup) - 1; i >= 0; i-- {
			cleanup[i]()
		}
	}
	binDir, err := os.MkdirTemp("", "bench-bin-")
	if err != nil {
		return nil, stop, err
	}
	cleanup = append(cleanup, func() { _ = os.RemoveAll(binDir) })
	build := exec.Command("go", "build", "-o", binDir+"/", "./cmd/manager", "./cmd/transcript-store")
	build.Dir = testenv.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		return nil, stop, fmt.Errorf("build: %v\n%s", err, out)
	}
	state, err := os.MkdirTemp("", "bench-state-")
	if err != nil {
		return nil, stop, err
	}
	cleanup = append(cleanup, func() { _ = os.RemoveAll(state) })
	logf, err := os.Create(filepath.Join(os.TempDir(), logName))
	if err != nil {
		return nil, stop, err
	}
	cleanup = append(cleanup, func() { _ = logf.Close() })
	o.RepoRoot, o.BinDir, o.StateDir, o.NoSamples, o.Log = testenv.RepoRoot(), binDir, state, true, logf
	c, err := devcluster.Start(ctx, o)
	if err != nil {
		return nil, stop, err
	}
	cleanup = append(cleanup, c.Stop)
	return c, stop, nil
}
