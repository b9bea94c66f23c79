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
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
)

func newCompactCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "compact KEY",
		Short: "Ask for a compaction of a session's history now: its older messages are folded into a summary the model keeps",
		Example: `  # fold the main session's older history into a summary now
  kubectl sessions compact agent:main:main

  # then see the compaction record
  kubectl sessions history agent:main:main --limit 5`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, ns, err := o.clientIn()
			if err != nil {
				return err
			}
			key := args[0]
			if err := requestCompaction(cmd.Context(), cl, ns, key, strconv.FormatInt(time.Now().UnixNano(), 36)); err != nil {
				return err
			}
			fmt.Fprintf(o.streams.Out, "%s compaction requested\n", key)
			return nil
		},
	}
}

// requestCompaction sets the session's compact-request annotation to id, which its
// controller acts on once (a new id asks again); the user's own RBAC decides.
func requestCompaction(ctx context.Context, cl client.Client, namespace, key, id string) error {
	s, err := lookup.SessionByKey(ctx, cl, namespace, key)
	if err != nil {
		return err
	}
	if s == nil {
		return fmt.Errorf("no session %q in namespace %s", key, namespace)
	}
	base := s.DeepCopy()
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Annotations[sessionsv1alpha1.CompactRequestAnnotation] = id
	return cl.Patch(ctx, s, client.MergeFrom(base))
}
