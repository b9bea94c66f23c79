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
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
)

func TestDeliveriesTable(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	rows := []deliveryRow{
		{object: "subagentrun/old", created: now.Add(-time.Hour), announce: &sessionsv1alpha1.Announce{Status: sessionsv1alpha1.AnnounceDelivered, Target: "slack:C0123",
			Parts: 2, DeliveredParts: []sessionsv1alpha1.DeliveredPart{{MessageID: "1.1"}, {MessageID: "1.2"}}, Thread: &sessionsv1alpha1.AnnounceThread{Channel: "slack", ID: "1.1"}}},
		{object: "sessionsend/new", created: now.Add(-time.Minute), announce: &sessionsv1alpha1.Announce{Status: sessionsv1alpha1.AnnounceFailed, Target: "telegram:-1",
			Parts: 1, Attempts: 1, Error: "Bad Request: chat not found", Reason: "telegram answered part 1 of 1 with 400 after 1 attempt: Bad Request: chat not found"}},
		{object: "sessionsend/skip", created: now.Add(-2 * time.Hour), announce: &sessionsv1alpha1.Announce{Status: sessionsv1alpha1.AnnounceSkipped, Reason: "ANNOUNCE_SKIP"}},
	}
	var out bytes.Buffer
	printDeliveries(&out, rows, 2, now)
	want := "" +
		"OBJECT           STATUS     TARGET       PARTS  THREAD  AGE  ERROR\n" +
		"sessionsend/new  failed     telegram:-1  0/1    -       60s  Bad Request: chat not found\n" +
		"subagentrun/old  delivered  slack:C0123  2/2    1.1     60m  -\n"
	if d := cmp.Diff(want, out.String()); d != "" {
		t.Errorf("table (-want +got):\n%s", d)
	}
}

func TestPrintRoute(t *testing.T) {
	signing := &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k"}
	cases := map[string]struct {
		route policy.Route
		want  string
	}{
		"chat": {policy.Route{Channel: "telegram", To: "-1001234", ThreadID: "42", Sink: &sessionsv1alpha1.DeliverySink{Kind: sessionsv1alpha1.DeliveryTelegram}},
			"delivery: telegram sink for channel telegram, chat -1001234, thread 42\n"},
		"signed webhook": {policy.Route{Channel: "webchat", Sink: &sessionsv1alpha1.DeliverySink{Kind: sessionsv1alpha1.DeliveryWebhook, URL: "https://h/x", SigningSecretRef: signing}},
			"delivery: webhook sink for channel webchat, POST https://h/x (signed)\n"},
		"no chat id": {policy.Route{Channel: "slack", Sink: &sessionsv1alpha1.DeliverySink{Kind: sessionsv1alpha1.DeliverySlack}, Problem: "no slack chat id: set spec.lastTo"},
			"delivery: slack sink, but no slack chat id: set spec.lastTo\n"},
		"no sink": {policy.Route{Channel: "discord"}, "delivery: no sink for channel \"discord\" in SessionPolicy default spec.delivery (announces end noSink)\n"},
	}
	for name, tc := range cases {
		var out bytes.Buffer
		printRoute(&out, tc.route)
		if d := cmp.Diff(tc.want, out.String()); d != "" {
			t.Errorf("%s (-want +got):\n%s", name, d)
		}
	}
}
