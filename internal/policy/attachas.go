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
	"path"
	"slices"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation/field"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// maxMountPath bounds attachAs.mountPath, as the CRD does.
const maxMountPath = 255

// CheckAttachAs validates attachAs: its mountPath, when set, is a relative path inside the
// child's workspace (no leading /, no .. element, no \ or control characters). A sandboxed
// child's attachments are written there in its sandbox; an unsandboxed child's only record it.
func CheckAttachAs(a *sessionsv1alpha1.AttachAs, p *field.Path) field.ErrorList {
	if a == nil || a.MountPath == "" {
		return nil
	}
	if msg := badMountPath(a.MountPath); msg != "" {
		return field.ErrorList{field.Invalid(p.Child("mountPath"), a.MountPath, msg)}
	}
	return nil
}

// badMountPath says what is wrong with a mount path, or "" when it is fine.
func badMountPath(mp string) string {
	switch {
	case len(mp) > maxMountPath:
		return "must be at most 255 bytes"
	case strings.HasPrefix(mp, "/"):
		return "must be a relative path inside the workspace, not an absolute one"
	case strings.Contains(mp, "\\"):
		return `must not contain \`
	case strings.ContainsFunc(mp, func(r rune) bool { return r == 0 || unicode.IsControl(r) }):
		return "must not contain NUL or control characters"
	case slices.Contains(strings.Split(mp, "/"), ".."):
		return "must stay inside the workspace: no .. element"
	case path.Clean(mp) == ".":
		return "must name a directory inside the workspace, not the workspace itself"
	}
	return ""
}
