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

package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// FormatVersion is written in every header; readers accept this version and older.
const FormatVersion = 1

const headerType = "session"

// headerLine is the on-disk form of the first line.
type headerLine struct {
	Type             string    `json:"type"`
	Version          int       `json:"version"`
	SessionID        string    `json:"sessionId"`
	SessionKey       string    `json:"sessionKey"`
	Namespace        string    `json:"namespace"`
	CreatedAt        time.Time `json:"createdAt"`
	ParentSessionKey string    `json:"parentSessionKey,omitempty"`
}

// EncodeHeader returns the header line, newline included.
func EncodeHeader(h SessionHeader) ([]byte, error) {
	b, err := json.Marshal(headerLine{
		Type: headerType, Version: FormatVersion, SessionID: h.SessionID, SessionKey: h.SessionKey,
		Namespace: h.Namespace, CreatedAt: h.CreatedAt.UTC(), ParentSessionKey: h.ParentSessionKey,
	})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// DecodeHeader parses a header line (with or without its newline).
func DecodeHeader(line []byte) (SessionHeader, error) {
	var hl headerLine
	if err := json.Unmarshal(bytes.TrimSuffix(line, []byte("\n")), &hl); err != nil {
		return SessionHeader{}, fmt.Errorf("transcript header: %w", err)
	}
	switch {
	case hl.Type != headerType:
		return SessionHeader{}, fmt.Errorf("transcript header: type %q, want %q", hl.Type, headerType)
	case hl.Version < 1 || hl.Version > FormatVersion:
		return SessionHeader{}, fmt.Errorf("transcript header: unsupported version %d", hl.Version)
	case hl.SessionID == "":
		return SessionHeader{}, errors.New("transcript header: empty sessionId")
	}
	return SessionHeader{
		Namespace: hl.Namespace, SessionID: hl.SessionID, SessionKey: hl.SessionKey,
		ParentSessionKey: hl.ParentSessionKey, CreatedAt: hl.CreatedAt,
	}, nil
}

// EncodeRecord returns the record line, newline included. The line is also the JSON that the
// history API and SSE send, so it is encoded once per append.
func EncodeRecord(r *Record) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// DecodeRecord parses one record line (with or without its newline). Anything that is not a
// well-formed record with a positive seq and a role is an error, so corrupt lines are skipped.
func DecodeRecord(line []byte) (Record, error) {
	var r Record
	if err := json.Unmarshal(bytes.TrimSuffix(line, []byte("\n")), &r); err != nil {
		return Record{}, fmt.Errorf("transcript record: %w", err)
	}
	if err := r.check(); err != nil {
		return Record{}, err
	}
	return r, nil
}

func (r *Record) check() error {
	switch {
	case r.Seq < 1:
		return fmt.Errorf("transcript record: seq %d", r.Seq)
	case r.Message.Role == "":
		return errors.New("transcript record: empty role")
	}
	return nil
}

// RecordMeta is the part of a record the index needs; decoding only this keeps opening a long
// transcript cheaper than a full decode.
type RecordMeta struct {
	Seq            int64     `json:"seq"`
	TS             time.Time `json:"ts"`
	IdempotencyKey string    `json:"idempotencyKey"`
	Message        struct {
		Role  string `json:"role"`
		Usage *Usage `json:"usage"`
	} `json:"message"`
}

// DecodeMeta decodes only the RecordMeta of one transcript line.
func DecodeMeta(line []byte) (RecordMeta, error) {
	var m RecordMeta
	if err := json.Unmarshal(line, &m); err != nil {
		return m, err
	}
	if m.Seq < 1 || m.Message.Role == "" {
		return m, errors.New("transcript record: missing seq or role")
	}
	return m, nil
}
