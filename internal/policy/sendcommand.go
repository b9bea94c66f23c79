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

package policy

import (
	"fmt"
	"strings"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// SendCommand is a person's standalone /send on|off|inherit message: it sets the target
// session's spec.sendPolicy (allow, deny, or unset to inherit) instead of reaching the model.
type SendCommand struct {
	// Word is on, off or inherit, as typed.
	Word string
	// Policy is the spec.sendPolicy it sets: allow, deny, or "" (inherit).
	Policy sessionsv1alpha1.Action
}

// ParseSendCommand says whether a send's whole message is a /send command: "/send on",
// "/send off" or "/send inherit", with nothing else but surrounding space.
func ParseSendCommand(message string) (SendCommand, bool) {
	f := strings.Fields(message)
	if len(f) != 2 || f[0] != "/send" {
		return SendCommand{}, false
	}
	switch f[1] {
	case "on":
		return SendCommand{Word: f[1], Policy: sessionsv1alpha1.ActionAllow}, true
	case "off":
		return SendCommand{Word: f[1], Policy: sessionsv1alpha1.ActionDeny}, true
	case "inherit":
		return SendCommand{Word: f[1], Policy: ""}, true
	}
	return SendCommand{}, false
}

// IsSendCommand says whether a send is a /send command the operator acts on: a person's
// send (no fromSessionKey) whose whole message is one. A session's send never is one.
func IsSendCommand(spec *sessionsv1alpha1.SessionSendSpec) (SendCommand, bool) {
	if spec.FromSessionKey != "" {
		return SendCommand{}, false
	}
	return ParseSendCommand(spec.Message)
}

// SendCommandDenial is why a /send command is refused ("" when it is allowed): it is
// owner-only, so it needs the verb set-send-policy on the target session, as a write of
// spec.sendPolicy does; a session (fromSessionKey) may not send one at all. It is not judged
// by the send policy: it is the way to change it.
func SendCommandDenial(cmd SendCommand, fromSession, user, targetKey, targetName string, mayUser bool) string {
	switch {
	case fromSession != "":
		return fmt.Sprintf("/send %s is a person's command to set the send policy of session %s (owner-only): session %s may not send it; send other text",
			cmd.Word, targetKey, fromSession)
	case !mayUser:
		return fmt.Sprintf("user %q may not send /send %s into session %s: the command sets spec.sendPolicy, so it needs the verb %s on agentsessions/%s (the agent-sessions-send-admin ClusterRole)",
			user, cmd.Word, targetKey, sessionsv1alpha1.VerbSetSendPolicy, targetName)
	}
	return ""
}

// SendCommandReply is the reply recorded on a /send command's SessionSend.
func SendCommandReply(cmd SendCommand, targetKey string) string {
	if cmd.Policy == "" {
		return fmt.Sprintf("send policy of %s: inherit (spec.sendPolicy unset; the SessionPolicy decides)", targetKey)
	}
	return fmt.Sprintf("send policy of %s: %s (spec.sendPolicy=%s)", targetKey, cmd.Word, cmd.Policy)
}
