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
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
)

func newCancelCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "cancel (sessionsend|subagentrun)/NAME...",
		Short: "Stop sends and sub-agent runs: their running turns are aborted, and what they started is cancelled too",
		Example: `  # stop a sub-agent run; it still announces "Status: cancelled" to its requester
  kubectl sessions cancel subagentrun/spawn-x7k2p

  # stop a send and every run and send its turns started
  kubectl sessions cancel ssend/main-to-research`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, ns, err := o.clientIn()
			if err != nil {
				return err
			}
			for _, arg := range args {
				obj, err := cancellable(arg)
				if err != nil {
					return err
				}
				obj.SetNamespace(ns)
				if err := sessiontools.Cancel(cmd.Context(), cl, obj); err != nil {
					return fmt.Errorf("%s: %w", arg, err)
				}
				fmt.Fprintf(o.streams.Out, "%s cancel requested\n", arg)
			}
			return nil
		},
	}
}

// cancellable parses KIND/NAME into the object to patch.
func cancellable(arg string) (client.Object, error) {
	kind, name, ok := strings.Cut(arg, "/")
	if !ok {
		return nil, fmt.Errorf("%q: want sessionsend/NAME or subagentrun/NAME", arg)
	}
	return sessiontools.Cancellable(kind, name)
}
