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
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
	"github.com/agent-sessions/agent-session-operator/internal/lookup"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
)

// manageVerb is one of the sessions management tool's actions as a subcommand.
type manageVerb struct {
	action, short, example string
}

var manageVerbs = []manageVerb{
	{sessiontools.ActionPatch, "Patch a session's label, model, thinking level or send policy, as the sessions tool's patch does",
		`  # relabel the main session, only while it is still the session you listed
  kubectl sessions patch agent:main:main --label inbox --expected-session-id 0b6f9a3e-...

  # deny sends into a group session (needs the verb set-send-policy, as /send off does)
  kubectl sessions patch agent:main:discord:group:g1 --send-policy deny

  # inherit the SessionPolicy again
  kubectl sessions patch agent:main:discord:group:g1 --send-policy inherit`},
	{sessiontools.ActionArchive, "Archive a session: it leaves the active list, its transcript is kept",
		`  # archive the session with this sessionId (kubectl sessions status shows it)
  kubectl sessions archive agent:main:webchat:dm:42 --expected-session-id 0b6f9a3e-...`},
	{sessiontools.ActionReset, "Reset a session: the key gets a new, empty transcript; the old one is kept",
		`  kubectl sessions reset agent:main:main --expected-session-id 0b6f9a3e-...`},
	{sessiontools.ActionRestore, "Restore an archived session with its transcript",
		`  kubectl sessions restore agent:main:webchat:dm:42 --expected-session-id 0b6f9a3e-...`},
}

// newManageCommands are patch, archive, reset and restore: the sessions tool's actions, made
// as the kubeconfig user (RBAC and admission judge the write) under the tool's guard.
func newManageCommands(o *options) []*cobra.Command {
	cmds := make([]*cobra.Command, 0, len(manageVerbs))
	for _, v := range manageVerbs {
		var a sessiontools.ManageArgs
		var label, model, thinking, sendPolicy string
		cmd := &cobra.Command{
			Use:   v.action + " KEY",
			Short: v.short,
			Long: v.short + `.

The write is guarded as the sessions tool's is: with --expected-session-id (required for
archive, reset and restore) it is made only while KEY still names the session of that
sessionId, however late it lands, so a stale key never hits a replacement session.`,
			Example: v.example,
			Args:    cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				a.Action, a.SessionKey = v.action, args[0]
				for name, p := range map[string]**string{"label": &a.Label, "model": &a.Model, "thinking-level": &a.ThinkingLevel, "send-policy": &a.SendPolicy} {
					if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
						val := f.Value.String()
						*p = &val
					}
				}
				cl, ns, err := o.clientIn()
				if err != nil {
					return err
				}
				var retired restorer
				if v.action == sessiontools.ActionRestore && o.historyURL != "" {
					retired = o.restoreRetired
				}
				return manage(cmd.Context(), cacheindex.WithIndexes(cl), ns, a, o.streams.Out, retired)
			},
		}
		cmd.Flags().StringVar(&a.ExpectedSessionID, "expected-session-id", "",
			"act only while KEY names the session of this sessionId (kubectl sessions status KEY, or list -o json, shows it)")
		if v.action == sessiontools.ActionPatch {
			cmd.Flags().StringVar(&label, "label", "", `the session's label ("" clears it)`)
			cmd.Flags().StringVar(&model, "model", "", `the session's model override, one its Agent allows ("" clears it)`)
			cmd.Flags().StringVar(&thinking, "thinking-level", "", `off, minimal, low, medium, high or xhigh ("" clears it)`)
			cmd.Flags().StringVar(&sendPolicy, "send-policy", "", "allow, deny or inherit (needs the verb set-send-policy on the session)")
		} else {
			_ = cmd.MarkFlagRequired("expected-session-id")
		}
		cmds = append(cmds, cmd)
	}
	return cmds
}

// manage runs one action of the sessions tool as the client's user and prints its outcome;
// a refusal (forbidden, error, not_found) is the command's error.
//
// A restore of a session with no object (retired by the SessionPolicy's retention) goes to
// retired, when given: the transcript-store's console action, which reads the records of
// retired sessions the plugin cannot.
func manage(ctx context.Context, cl client.WithWatch, ns string, a sessiontools.ManageArgs, out io.Writer, retired restorer) error {
	call := &sessiontools.Call{Env: &sessiontools.Env{Client: cl, Reader: cl, Watcher: cl}, Namespace: ns}
	res, err := call.Manage(ctx, a)
	if err != nil {
		return err
	}
	if r, ok := res.(*sessiontools.StatusResult); ok && r.Status == sessiontools.StatusNotFound && retired != nil {
		s, err := lookup.New(cl, cl).ResolveSession(ctx, ns, a.SessionKey, "")
		if err != nil {
			return err
		}
		if s == nil {
			if res, err = retired(ctx, ns, a); err != nil {
				return err
			}
		}
	}
	switch r := res.(type) {
	case *sessiontools.StatusResult:
		return fmt.Errorf("%s %s: %s: %s", a.Action, a.SessionKey, r.Status, r.Error)
	case sessiontools.ManageResult:
		line := fmt.Sprintf("%s %s: %s (sessionId %s)", r.SessionKey, a.Action, r.Status, r.SessionID)
		if r.Note != "" {
			line += "; " + r.Note
		}
		_, err := fmt.Fprintln(out, line)
		return err
	}
	return fmt.Errorf("%s %s: unexpected result %v", a.Action, a.SessionKey, res)
}

// restorer restores a retired session (restoreRetired).
type restorer func(ctx context.Context, ns string, a sessiontools.ManageArgs) (any, error)

// restoreRetired runs the sessions tool's restore as the caller through the
// transcript-store's console action (/console/tools/sessions): its call reads the store's
// records of retired sessions and recreates the object as the caller.
func (o *options) restoreRetired(ctx context.Context, ns string, a sessiontools.ManageArgs) (any, error) {
	resp, err := o.listenerPost(ctx, ns, "/console/tools/sessions", map[string]any{
		"action": a.Action, "sessionKey": a.SessionKey, "expectedSessionId": a.ExpectedSessionID})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	var res sessiontools.ManageResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("restore through the transcript-store: %w", err)
	}
	if res.Status == sessiontools.StatusOK || res.Status == sessiontools.StatusAccepted {
		return res, nil
	}
	var refusal sessiontools.StatusResult
	if err := json.Unmarshal(raw, &refusal); err != nil {
		return nil, fmt.Errorf("restore through the transcript-store: %w", err)
	}
	return &refusal, nil
}
