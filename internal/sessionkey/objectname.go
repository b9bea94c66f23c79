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

package sessionkey

import (
	"crypto/sha256"
	"encoding/hex"
)

const (
	// maxNameLen keeps names valid as DNS-1123 labels, not only subdomains,
	// so they can also be used as label values and in generated names.
	maxNameLen = 63
	// hashLen hex digits (40 bits) of sha256(key) keep keys that sanitize to
	// the same prefix ("a:b" and "a.b", or long keys cut at the same place)
	// apart.
	hashLen      = 10
	maxPrefixLen = maxNameLen - 1 - hashLen
	// fallbackPrefix is used when nothing of the key survives sanitizing.
	fallbackPrefix = "session"
)

// ObjectName returns the Kubernetes object name for a session key: a
// readable prefix made of the key's ASCII letters and digits, '-' for every
// run of anything else, cut to fit, then '-' and the first 10 hex digits of
// the key's sha256. The result is a valid DNS-1123 label (lower case, at most
// 63 characters, alphanumeric at both ends) for any input.
//
// Pass the resolved key (see Resolve): "main" names a different object for
// every agent. The format is part of the stored state, since existing
// objects are found by this name; changing it orphans them.
func ObjectName(key string) string {
	// Built in one array on the stack: every admission and lookup names a session this way.
	var name [maxNameLen]byte
	n := 0
	dash := false
	for i := 0; i < len(key) && n < maxPrefixLen; i++ {
		c := key[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		default:
			dash = n > 0 // no leading '-'; collapse runs
			continue
		}
		if dash {
			name[n] = '-'
			n++
			dash = false
			if n >= maxPrefixLen {
				break
			}
		}
		name[n] = c
		n++
	}
	for n > 0 && name[n-1] == '-' {
		n--
	}
	if n == 0 {
		n = copy(name[:], fallbackPrefix)
	}
	name[n] = '-'
	n++
	var keyBuf [128]byte // most keys hash without a copy on the heap
	sum := sha256.Sum256(append(keyBuf[:0], key...))
	var hexSum [2 * sha256.Size]byte
	hex.Encode(hexSum[:], sum[:])
	n += copy(name[n:], hexSum[:hashLen])
	return string(name[:n])
}
