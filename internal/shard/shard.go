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

// Package shard says which namespaces one manager of a sharded install owns (--shard=i/n):
// namespace ns belongs to shard fnv32a(ns) mod n. Every rule that joins objects stays inside
// a namespace, so shards share nothing but the API server (docs/operations/scaling.md).
package shard

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Shard is shard Index of Count; the zero value, like 0/1, owns every namespace.
type Shard struct {
	Index, Count int
}

// Parse reads "i/n" with 0 <= i < n.
func Parse(s string) (Shard, error) {
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("shard %q: want i/n with 0 <= i < n, e.g. 0/2", s)
	}
	return Shard{Index: i, Count: n}, nil
}

// Of is the shard, of n, that owns namespace.
func Of(namespace string, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(namespace))
	return int(h.Sum32() % uint32(n))
}

// Owns reports whether namespace is this shard's.
func (s Shard) Owns(namespace string) bool { return s.Count <= 1 || Of(namespace, s.Count) == s.Index }

// Predicate passes the events of objects in the shard's namespaces only.
func (s Shard) Predicate() predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool { return s.Owns(o.GetNamespace()) })
}

// LeaseName is base for an unsharded manager and base-shard-i-of-n for a shard, so that
// each shard elects its own leader among its replicas.
func (s Shard) LeaseName(base string) string {
	if s.Count <= 1 {
		return base
	}
	return fmt.Sprintf("%s-shard-%d-of-%d", base, s.Index, s.Count)
}

// String is "i/n".
func (s Shard) String() string {
	if s.Count == 0 {
		return "0/1"
	}
	return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count)
}

// Set parses a flag value.
func (s *Shard) Set(v string) error {
	p, err := Parse(v)
	if err == nil {
		*s = p
	}
	return err
}
