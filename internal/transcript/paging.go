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

// IndexEntry locates one valid record line. nonTool counts the non-toolResult records up to and
// including this one, which makes "N messages without tool results" and hasMore O(1) per step.
type IndexEntry struct {
	Seq     int64
	Off     int64
	NonTool int64
}

// SearchSeq returns the first index whose seq is >= seq. Seqs are dense unless lines were
// corrupt, so the direct guess almost always hits.
func SearchSeq(entries []IndexEntry, seq int64) int {
	n := len(entries)
	if n == 0 || seq <= entries[0].Seq {
		return 0
	}
	if seq > entries[n-1].Seq {
		return n
	}
	if g := int(seq - entries[0].Seq); g < n && entries[g].Seq == seq {
		return g
	}
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if entries[m].Seq < seq {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// SelectPage picks the entries of a page, newest first, and fills HasMore and NextCursor.
func SelectPage(entries []IndexEntry, limit int, opts ReadOptions) ([]int, Page) {
	end := len(entries)
	if opts.BeforeSeq > 0 {
		end = SearchSeq(entries, opts.BeforeSeq)
	}
	floor := 0
	if opts.AfterSeq > 0 {
		floor = min(SearchSeq(entries, opts.AfterSeq+1), end)
	}
	picked := make([]int, 0, min(limit, end-floor))
	for i := end - 1; i >= floor && len(picked) < limit; i-- {
		if opts.IncludeTools || isNonTool(entries, i) {
			picked = append(picked, i)
		}
	}
	var page Page
	if n := len(picked); n > 0 {
		lowest := picked[n-1]
		if opts.IncludeTools {
			page.HasMore = lowest > floor
		} else {
			page.HasMore = lowest > floor && nonToolBefore(entries, lowest) > nonToolBefore(entries, floor)
		}
		if page.HasMore {
			page.NextCursor = FormatCursor(entries[lowest].Seq)
		}
	}
	return picked, page
}

// nonToolBefore counts the non-tool records before index i.
func nonToolBefore(entries []IndexEntry, i int) int64 {
	if i == 0 {
		return 0
	}
	return entries[i-1].NonTool
}
func isNonTool(entries []IndexEntry, i int) bool {
	if i == 0 {
		return entries[0].NonTool == 1
	}
	return entries[i].NonTool > entries[i-1].NonTool
}

// AppendEntry indexes the next record, carrying the running count of non-tool records.
func AppendEntry(entries []IndexEntry, seq, off int64, role string) []IndexEntry {
	e := IndexEntry{Seq: seq, Off: off}
	if n := len(entries); n > 0 {
		e.NonTool = entries[n-1].NonTool
	}
	// A turn's system context counts with the tool records: a detail of how the turn ran,
	// shown only with includeTools.
	if role != RoleToolResult && role != RoleSystem {
		e.NonTool++
	}
	return append(entries, e)
}

// TrimPage keeps the newest of picked (newest first) whose sizes add up to maxBytes, at
// least one, and fixes page's HasMore and NextCursor when it dropped any.
func TrimPage(entries []IndexEntry, picked []int, page *Page, size func(i int) int64, maxBytes int64) []int {
	var total int64
	for k, i := range picked {
		total += size(i)
		if k > 0 && total > maxBytes {
			page.HasMore = true
			page.NextCursor = FormatCursor(entries[picked[k-1]].Seq)
			return picked[:k]
		}
	}
	return picked
}
