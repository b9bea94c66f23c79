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
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation/field"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// Built-in attachment limits; a SessionPolicy may lower them, never raise them.
const (
	MaxAttachments         = 50
	MaxAttachmentBytes     = 1 << 20
	MaxAttachmentsBytes    = 5 << 20
	AttachmentManifestName = "manifest.json"
)

// AttachmentLimits are the limits in force for one spawn.
type AttachmentLimits struct {
	Count      int
	FileBytes  int64
	TotalBytes int64
}

// LimitsFor lowers the built-in limits by the SessionPolicy's, where it sets them.
func LimitsFor(p *sessionsv1alpha1.SessionPolicySpec) AttachmentLimits {
	l := AttachmentLimits{Count: MaxAttachments, FileBytes: MaxAttachmentBytes, TotalBytes: MaxAttachmentsBytes}
	if p == nil || p.Attachments == nil {
		return l
	}
	if a := p.Attachments; a.MaxCount != nil {
		l.Count = min(l.Count, int(*a.MaxCount))
	}
	if a := p.Attachments; a.MaxFileBytes != nil {
		l.FileBytes = min(l.FileBytes, *a.MaxFileBytes)
	}
	if a := p.Attachments; a.MaxTotalBytes != nil {
		l.TotalBytes = min(l.TotalBytes, *a.MaxTotalBytes)
	}
	return l
}

// DecodeAttachment returns an attachment's bytes; base64 is decoded strictly (no stray
// characters, correct padding).
func DecodeAttachment(a sessionsv1alpha1.Attachment) ([]byte, error) {
	if a.Encoding == sessionsv1alpha1.EncodingBase64 {
		return base64.StdEncoding.Strict().DecodeString(a.Content)
	}
	return []byte(a.Content), nil
}

// AttachmentReceipt is one attachment's receipt as the seeds give it: its name, decoded
// size and sha256. The spawn tool returns them at once; the run's status repeats them once
// the files are written.
func AttachmentReceipt(a sessionsv1alpha1.Attachment) (sessionsv1alpha1.AttachmentReceipt, []byte, error) {
	data, err := DecodeAttachment(a)
	if err != nil {
		return sessionsv1alpha1.AttachmentReceipt{}, nil, err
	}
	sum := sha256.Sum256(data)
	return sessionsv1alpha1.AttachmentReceipt{Name: a.Name, Bytes: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}, data, nil
}

// CheckAttachments validates names, encodings and sizes against the limits.
func CheckAttachments(atts []sessionsv1alpha1.Attachment, l AttachmentLimits, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(atts) > l.Count {
		errs = append(errs, field.TooMany(path, len(atts), l.Count))
	}
	seen := map[string]bool{}
	var total int64
	for i, a := range atts {
		p := path.Index(i)
		if msg := badAttachmentName(a.Name); msg != "" {
			errs = append(errs, field.Invalid(p.Child("name"), a.Name, msg))
		} else if seen[a.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), a.Name))
		}
		seen[a.Name] = true
		data, err := DecodeAttachment(a)
		if err != nil {
			errs = append(errs, field.Invalid(p.Child("content"), "<base64>", "not valid base64: "+err.Error()))
			continue
		}
		n := int64(len(data))
		total += n
		if n > l.FileBytes {
			errs = append(errs, field.TooLong(p.Child("content"), "", int(l.FileBytes)))
		}
	}
	if total > l.TotalBytes {
		errs = append(errs, field.Invalid(path, fmt.Sprintf("%d bytes", total),
			fmt.Sprintf("attachments total %d bytes, over the limit of %d", total, l.TotalBytes)))
	}
	return errs
}

// badAttachmentName says what is wrong with a file name, or "" when it is fine: names are
// single path elements, so nothing can land outside the attachments directory.
func badAttachmentName(name string) string {
	switch {
	case name == "":
		return "must not be empty"
	case name == "." || name == "..":
		return "must not be . or .."
	case name == AttachmentManifestName:
		return "is reserved for the attachments manifest"
	case strings.ContainsAny(name, "/\\"):
		return "must not contain / or \\"
	case strings.ContainsFunc(name, func(r rune) bool { return r == 0 || unicode.IsControl(r) }):
		return "must not contain NUL or control characters"
	}
	return ""
}
