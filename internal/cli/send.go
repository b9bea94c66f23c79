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
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func newSendCommand(o *options) *cobra.Command {
	var timeout int32
	var from string
	cmd := &cobra.Command{
		Use:   "send KEY MESSAGE",
		Short: "Send a message into a session and print the reply",
		Example: `  # ask the research agent and wait up to 30s for its reply
  kubectl sessions send agent:research:main "ping"

  # fire and forget
  kubectl sessions send main "nightly digest is ready" --timeout 0

  # a standalone /send on|off|inherit sets the session's send policy instead of reaching
  # its model (owner-only: the verb set-send-policy on the session)
  kubectl sessions send agent:main:discord:group:g1 "/send off"`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.send(cmd, args[0], args[1], timeout, from)
		},
	}
	cmd.Flags().Int32Var(&timeout, "timeout", 30, "seconds to wait for the reply, 0 to 600; 0 = fire-and-forget")
	cmd.Flags().StringVar(&from, "from", "", "send as this session (runs the reply-back ping-pong)")
	return cmd
}

func (o *options) send(cmd *cobra.Command, key, message string, timeout int32, from string) error {
	cl, ns, err := o.clientIn()
	if err != nil {
		return err
	}
	s := &sessionsv1alpha1.SessionSend{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "send-", Namespace: ns},
		Spec:       sessionsv1alpha1.SessionSendSpec{SessionKey: key, Message: message, TimeoutSeconds: &timeout, FromSessionKey: from},
	}
	if err := cl.Create(cmd.Context(), s); err != nil {
		return err
	}
	// The operator decides the timeout outcome; the extra minute only bounds a stuck watch.
	ctx, cancel := context.WithTimeout(cmd.Context(), time.Duration(timeout)*time.Second+time.Minute)
	defer cancel()
	s, err = waitFor(ctx, cl, s, &sessionsv1alpha1.SessionSendList{}, func(s *sessionsv1alpha1.SessionSend) bool { return s.Status.Status != "" })
	if err != nil {
		return fmt.Errorf("sessionsend/%s: %w", s.Name, err)
	}
	line, err := sendOutcome(s)
	if err != nil {
		return err
	}
	fmt.Fprintln(o.streams.Out, line)
	return nil
}

// sendOutcome is what a finished wait prints: the reply, the receipt of a fire-and-forget
// send, or an exit-code-2 error that names the status without repeating "error:".
func sendOutcome(s *sessionsv1alpha1.SessionSend) (string, error) {
	switch s.Status.Status {
	case sessionsv1alpha1.SendOK:
		if s.Status.ReplyTruncated {
			// Status keeps the first 8 KiB; say so rather than print a cut reply as whole.
			return s.Status.Reply + "\n(the reply is longer than the 8 KiB status keeps: kubectl sessions history " +
				s.TargetKey() + " shows it whole)", nil
		}
		return s.Status.Reply, nil
	case sessionsv1alpha1.SendAccepted:
		return fmt.Sprintf("accepted: sessionsend/%s runId %s", s.Name, s.Status.RunID), nil
	default:
		return "", &ExitError{Code: 2, Msg: fmt.Sprintf("sessionsend/%s ended with status %s: %s", s.Name, s.Status.Status, s.Status.Error)}
	}
}

// waitFor watches obj until done holds for its latest state, and returns that state. The
// watch is client-go's list-then-watch: a watch the server closes (its timeout, an API
// server restart, a dropped connection) resumes from the last resourceVersion seen, and
// one too old to resume relists, so only ctx ends the wait without an outcome.
func waitFor[T client.Object](ctx context.Context, cl client.WithWatch, obj T, list client.ObjectList, done func(T) bool) (T, error) {
	// A new list each call: the reflector keeps what a list returns.
	opts := func(o metav1.ListOptions) (client.ObjectList, []client.ListOption) {
		return list.DeepCopyObject().(client.ObjectList), []client.ListOption{client.InNamespace(obj.GetNamespace()),
			client.MatchingFields{"metadata.name": obj.GetName()}, &client.ListOptions{Raw: &o}}
	}
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			l, lo := opts(o)
			return l, cl.List(ctx, l, lo...)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			l, lo := opts(o)
			return cl.Watch(ctx, l, lo...)
		},
	}
	ev, err := watchtools.UntilWithSync(ctx, lw, obj.DeepCopyObject(), nil, func(ev watch.Event) (bool, error) {
		got, ok := ev.Object.(T)
		return ok && (ev.Type == watch.Added || ev.Type == watch.Modified) && done(got), nil
	})
	if err != nil {
		return obj, fmt.Errorf("no outcome yet: %w", err)
	}
	return ev.Object.(T), nil
}
