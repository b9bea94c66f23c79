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

package ownerflow

import (
	"context"
	"encoding/json"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// MaxStatusText bounds each model-written status field (reply, turns[].reply, result,
// error): a status write over etcd's object limit is refused forever and the object would
// never end. The whole text stays in the transcript, where StatusText says it is.
const MaxStatusText = 8 << 10

// StatusText is what status keeps of a turn's text: its first MaxStatusText bytes, and, when
// that cut it, the transcript record seq of the whole text (0 when whole), which WholeText
// reads back for the doors and the next steps.
func StatusText(text string, seq int64) (string, int64) {
	if len(text) <= MaxStatusText {
		return text, 0
	}
	return textutil.Truncate(text, MaxStatusText), seq
}

// WholeText is a text status keeps as preview, whole again when status cut it (seq > 0):
// read from the transcript of the session named key, up to transcript.MaxReplyBytes.
func (d *OwnerDeps) WholeText(ctx context.Context, namespace, key, preview string, seq int64) (string, error) {
	if seq == 0 || d.Transcripts == nil {
		return preview, nil
	}
	s, err := d.Lookup.SessionByKey(ctx, namespace, key)
	if err != nil || s == nil || s.Status.SessionID == "" {
		return preview, err
	}
	return transcript.TextAt(ctx, d.Transcripts, namespace, s.Status.SessionID, seq)
}

// MaxConditionMessage bounds a condition's message to what kubectl describe shows.
const MaxConditionMessage = 512

// MaxErrorText bounds an error copied into a status field (notes, turns[].error, an
// announce's reason): what a person reads; the whole error is in the manager's log.
const MaxErrorText = 1024

// Outcome is how a send or run ended; its condition type is the Job convention's.
type Outcome string

const (
	Succeeded Outcome = sessionsv1alpha1.ConditionCompleted
	Failed    Outcome = sessionsv1alpha1.ConditionFailed
	Cancelled Outcome = sessionsv1alpha1.ConditionCancelled
)

// SetOutcome sets the one terminal condition of a send or run: Completed only on success,
// so `kubectl wait --for=condition=Completed` does not return on a failure. No
// observedGeneration of its own: kubectl wait falls back to status.observedGeneration.
func SetOutcome(conds *[]metav1.Condition, o Outcome, reason, msg string) {
	meta.SetStatusCondition(conds, metav1.Condition{Type: string(o), Status: metav1.ConditionTrue,
		Reason: reason, Message: textutil.Truncate(msg, MaxConditionMessage)})
}

// CancelStarted sets spec.cancel on the unfinished sends and runs that obj's turns started
// (labelled with its UID) and, for a run, those its child session started: a cancel
// reaches every descendant, each one cascading further when its own controller sees it.
func CancelStarted(ctx context.Context, c client.Client, obj client.Object, childKey string) error {
	ns := client.InNamespace(obj.GetNamespace())
	byOwner := client.MatchingLabels{sessionsv1alpha1.StartedByLabel: string(obj.GetUID())}
	var sends sessionsv1alpha1.SessionSendList
	var runs sessionsv1alpha1.SubagentRunList
	if err := c.List(ctx, &sends, ns, byOwner); err != nil {
		return err
	}
	if err := c.List(ctx, &runs, ns, byOwner); err != nil {
		return err
	}
	if childKey != "" {
		var fromChild sessionsv1alpha1.SessionSendList
		var ofChild sessionsv1alpha1.SubagentRunList
		if err := c.List(ctx, &fromChild, ns, client.MatchingFields{cacheindex.SendFrom: childKey}); err != nil {
			return err
		}
		if err := c.List(ctx, &ofChild, ns, client.MatchingFields{cacheindex.RunRequester: childKey}); err != nil {
			return err
		}
		sends.Items = append(sends.Items, fromChild.Items...)
		runs.Items = append(runs.Items, ofChild.Items...)
	}
	patch := client.RawPatch(types.MergePatchType, cancelPatch)
	for i := range sends.Items {
		s := &sends.Items[i]
		if !s.Spec.Cancel && !s.Status.Finished() {
			if err := c.Patch(ctx, s, patch); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
	}
	for i := range runs.Items {
		r := &runs.Items[i]
		if !r.Spec.Cancel && !r.Status.Finished() {
			if err := c.Patch(ctx, r, patch); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
	}
	return nil
}

var cancelPatch, _ = json.Marshal(map[string]any{"spec": map[string]any{"cancel": true}})
