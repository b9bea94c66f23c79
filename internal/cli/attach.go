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
	"encoding/base64"
	"fmt"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"unicode/utf8"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// readAttachment makes a spawn attachment of a local file: named by its base name, its
// content as UTF-8 text when it is text, else base64, with a MIME type from its extension
// (or sniffed from its content when the extension says nothing). Size and name limits are
// the admission webhook's to judge.
func readAttachment(path string) (sessionsv1alpha1.Attachment, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return sessionsv1alpha1.Attachment{}, fmt.Errorf("--attach: %w", err)
	}
	return attachment(filepath.Base(path), data), nil
}

// attachment is the pure half of readAttachment.
func attachment(name string, data []byte) sessionsv1alpha1.Attachment {
	a := sessionsv1alpha1.Attachment{Name: name, MimeType: mime.TypeByExtension(filepath.Ext(name))}
	if a.MimeType == "" {
		a.MimeType = http.DetectContentType(data)
	}
	if isText(data) {
		a.Content, a.Encoding = string(data), sessionsv1alpha1.EncodingUTF8
	} else {
		a.Content, a.Encoding = base64.StdEncoding.EncodeToString(data), sessionsv1alpha1.EncodingBase64
	}
	return a
}

// isText is valid UTF-8 without NUL bytes: a NUL is valid UTF-8 yet marks binary data.
func isText(data []byte) bool {
	return utf8.Valid(data) && bytes.IndexByte(data, 0) < 0
}
