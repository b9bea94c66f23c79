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

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// Execute runs the command tree with args and returns the process exit code; a failure is
// printed once to ErrOut, prefixed "error:" as kubectl prints its own.
func Execute(ctx context.Context, streams genericiooptions.IOStreams, args []string) int {
	cmd := NewCommand(streams)
	cmd.SetArgs(args)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	return reportError(streams.ErrOut, cmd.ExecuteContext(ctx))
}

// reportError prints err (if any) and returns its exit code.
func reportError(w io.Writer, err error) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(w, "error:", err)
	if exit, ok := errors.AsType[*ExitError](err); ok {
		return exit.Code
	}
	return 1
}
