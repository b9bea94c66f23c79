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

package announce

import (
	"cmp"
	"fmt"
	"regexp"
	"strings"
	"time"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/protocol"
)

// Fixed openings of the announce steps' input texts: scripted agents and people match them.
const (
	AgentAnnounceOpening    = "Agent-to-agent announce step."
	SubagentAnnounceOpening = "Sub-agent announce step."
)

// oneLine folds a text onto one labelled line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// noReplyText stands in the announce input for a round-1 reply that was none: the target
// answered nothing or exactly REPLY_SKIP, whose literal token is never shown.
const noReplyText = "(no reply)"

// AgentAnnounceInput is the announce step's input in the target of a send: the original
// request, the round-1 reply and the latest ping-pong reply, one per labelled line.
func AgentAnnounceInput(request, round1, latest string) string {
	if protocol.NoReply(round1) {
		round1 = noReplyText
	}
	return strings.Join([]string{
		AgentAnnounceOpening,
		"Original request: " + oneLine(request),
		"Round 1 reply: " + oneLine(round1),
		"Latest reply: " + oneLine(latest),
		"Reply exactly " + sessionsv1alpha1.AnnounceSkip + " to stay silent; any other reply is sent to this session's channel.",
	}, "\n")
}

// RunOutcome is a finished sub-agent run as its announce reports it.
type RunOutcome struct {
	Phase   sessionsv1alpha1.RunPhase
	Result  string
	Notes   string
	Runtime time.Duration
	Stats   sessionsv1alpha1.RunStats
	// BudgetExceeded: a budget stopped the run (Phase Failed); its Status says so.
	BudgetExceeded bool
}

// statusWord is the announce's Status: from the runtime outcome, never from the model.
func (o RunOutcome) statusWord() string {
	if o.BudgetExceeded {
		return "budget exceeded"
	}
	return statusWord(o.Phase)
}

// statusWord is the Status of a run that ended in phase p.
func statusWord(p sessionsv1alpha1.RunPhase) string {
	switch p {
	case sessionsv1alpha1.RunSucceeded:
		return "succeeded"
	case sessionsv1alpha1.RunTimedOut:
		return "timed out"
	case sessionsv1alpha1.RunCancelled:
		return "cancelled"
	default:
		return "failed"
	}
}

// StatsLine is the announce's stats: runtime, tokens, session key and id, transcript, cost.
func StatsLine(s sessionsv1alpha1.RunStats) string {
	parts := []string{
		"runtime " + s.Runtime,
		fmt.Sprintf("tokens %d in / %d out", s.InputTokens, s.OutputTokens),
		"sessionKey " + s.SessionKey,
		"sessionId " + s.SessionID,
	}
	if s.TranscriptPath != "" {
		parts = append(parts, "transcript "+s.TranscriptPath)
	}
	if s.Cost != "" {
		parts = append(parts, "cost "+s.Cost)
	}
	return strings.Join(parts, ", ")
}

// SubagentAnnounceInput is the announce step's input in the requester of a spawn.
func SubagentAnnounceInput(o RunOutcome) string {
	notes := o.Notes
	if notes == "" {
		notes = "none"
	}
	return strings.Join([]string{
		SubagentAnnounceOpening,
		"Status: " + o.statusWord(),
		"Result: " + oneLine(o.Result),
		"Notes: " + oneLine(notes),
		"Stats: " + StatsLine(o.Stats),
		"Reply exactly " + sessionsv1alpha1.AnnounceSkip + " to stay silent; any other reply is sent to this session's channel.",
	}, "\n")
}

// SubagentAnnounceReply is what a sub-agent announce delivers to the requester's channel:
// the requester model's reply normalised to Status/Result/Notes plus the stats line.
// Status and Stats come from the runtime whatever the reply claims; Result and Notes from
// the reply's labelled lines (Result, when unlabelled, from the reply's free text), else
// the run's own. ANNOUNCE_SKIP is returned as it is: the announce stays silent.
func SubagentAnnounceReply(o RunOutcome, reply string) string {
	if IsSkip(reply, sessionsv1alpha1.AnnounceSkip) {
		return reply
	}
	p := parseAnnounceReply(reply)
	return strings.Join([]string{
		"Status: " + o.statusWord(),
		"Result: " + indentRest(cmp.Or(p.result, p.free, strings.TrimSpace(o.Result), "none")),
		"Notes: " + indentRest(cmp.Or(p.notes, strings.TrimSpace(o.Notes), "none")),
		"Stats: " + StatsLine(o.Stats),
	}, "\n")
}

// indentRest indents every line of s but the first, so that a line of a model-written part
// ("Status: succeeded" in a run's result) reads as part of it, never as a label of its own.
func indentRest(s string) string {
	lines := strings.Split(s, "\n")
	for i := 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "" {
			lines[i] = "  " + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

// announceLabel is a line that opens a labelled part of an announce reply; models dress
// labels up ("**Result:**", "- Notes:"), so markup around the label is ignored.
var announceLabel = regexp.MustCompile(`(?i)^[\s*_#>-]*(status|result|notes?|stats)[\s*_]*:[*_]*\s*(.*)$`)

// announceParts are the parts of an announce reply: its Result and Notes lines (each
// running on to the next label) and its text before any label.
type announceParts struct{ free, result, notes string }

func parseAnnounceReply(reply string) announceParts {
	var free, result, notes []string
	cur := &free
	for _, line := range strings.Split(reply, "\n") {
		m := announceLabel.FindStringSubmatch(line)
		if m == nil {
			*cur = append(*cur, line)
			continue
		}
		switch strings.ToLower(m[1]) {
		case "result":
			cur = &result
		case "notes", "note":
			cur = &notes
		default:
			cur = new([]string) // Status and Stats are the runtime's: the model's are dropped
		}
		*cur = append(*cur, m[2])
	}
	join := func(ls []string) string { return strings.TrimSpace(strings.Join(ls, "\n")) }
	return announceParts{free: join(free), result: join(result), notes: join(notes)}
}

// IsSkip reports whether a reply is exactly the skip token (surrounding white space aside:
// models end lines).
func IsSkip(reply, token string) bool { return strings.TrimSpace(reply) == token }
