package transcript

import (
	"bytes"
	"context"
	"fmt"
)

// Read returns up to opts.Limit records before opts.BeforeSeq (or the last ones), oldest first.
// It walks the in-memory offset index backwards and reads only the chosen lines, so a page
// costs O(limit) whatever the transcript length.
func (st *FileStore) Read(_ context.Context, namespace, sessionID string, opts ReadOptions) (Page, error) {
	s, err := st.session(namespace, sessionID)
	if err != nil {
		return Page{}, err
	}
	limit := ClampLimit(opts.Limit)

	s.mu.Lock()
	if s.archived {
		err := s.notFound()
		s.mu.Unlock()
		return Page{}, err
	}
	picked, page := selectPage(s.entries, limit, opts)
	// Copy what the reads need so the file I/O happens without the lock: entries never move
	// once written and the file only grows.
	spans := make([]span, 0, len(picked))
	for j := len(picked) - 1; j >= 0; j-- {
		i := picked[j]
		if k := len(spans) - 1; k >= 0 && spans[k].lastIdx == i-1 {
			spans[k].lastIdx, spans[k].end = i, s.lineEnd(i)
			spans[k].starts = append(spans[k].starts, s.entries[i].off)
			continue
		}
		spans = append(spans, span{lastIdx: i, start: s.entries[i].off, end: s.lineEnd(i), starts: []int64{s.entries[i].off}})
	}
	s.mu.Unlock()

	if len(spans) == 0 {
		page.Messages = []Record{}
		return page, nil
	}
	f, release, err := st.files.acquire(s.path)
	if err != nil {
		return Page{}, err
	}
	defer release()
	page.Messages = make([]Record, 0, len(picked))
	for _, sp := range spans {
		buf := make([]byte, sp.end-sp.start)
		if _, err := f.ReadAt(buf, sp.start); err != nil {
			return Page{}, fmt.Errorf("transcript %s: %w", s.path, err)
		}
		for _, off := range sp.starts {
			line := buf[off-sp.start:]
			if j := bytes.IndexByte(line, '\n'); j >= 0 {
				line = line[:j]
			}
			rec, err := DecodeRecord(line)
			if err != nil {
				return Page{}, fmt.Errorf("transcript %s at offset %d: %w", s.path, off, err)
			}
			page.Messages = append(page.Messages, rec)
		}
	}
	return page, nil
}

// span is a run of adjacent chosen lines read with one ReadAt.
type span struct {
	lastIdx    int
	start, end int64
	starts     []int64
}

// selectPage picks the entries of a page, newest first, and fills HasMore and NextCursor.
func selectPage(entries []indexEntry, limit int, opts ReadOptions) ([]int, Page) {
	end := len(entries)
	if opts.BeforeSeq > 0 {
		end = searchSeq(entries, opts.BeforeSeq)
	}
	floor := 0
	if opts.AfterSeq > 0 {
		floor = min(searchSeq(entries, opts.AfterSeq+1), end)
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
			page.NextCursor = FormatCursor(entries[lowest].seq)
		}
	}
	return picked, page
}

// nonToolBefore counts the non-tool records before index i.
func nonToolBefore(entries []indexEntry, i int) int64 {
	if i == 0 {
		return 0
	}
	return entries[i-1].nonTool
}

func isNonTool(entries []indexEntry, i int) bool {
	if i == 0 {
		return entries[0].nonTool == 1
	}
	return entries[i].nonTool > entries[i-1].nonTool
}

// appendEntry indexes the next record, carrying the running count of non-tool records.
func appendEntry(entries []indexEntry, seq, off int64, role string) []indexEntry {
	e := indexEntry{seq: seq, off: off}
	if n := len(entries); n > 0 {
		e.nonTool = entries[n-1].nonTool
	}
	if role != RoleToolResult {
		e.nonTool++
	}
	return append(entries, e)
}
