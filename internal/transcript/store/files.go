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

package store

import (
	"container/list"
	"os"
	"sync"
)

// filePool keeps a bounded LRU of open transcript files so that thousands of sessions do not
// hold thousands of descriptors. A file in use (refs > 0) is never closed under its user.
type filePool struct {
	mu      sync.Mutex
	max     int
	lru     *list.List // of *pooledFile, most recent first
	byPath  map[string]*pooledFile
	onCount func(int)
}

type pooledFile struct {
	path string
	f    *os.File
	refs int
	gone bool // forgotten (archived); close when the last user releases it
	elem *list.Element
}

func newFilePool(limit int, onCount func(int)) *filePool {
	if limit < 1 {
		limit = 1
	}
	return &filePool{max: limit, lru: list.New(), byPath: map[string]*pooledFile{}, onCount: onCount}
}

// acquire returns the open file for path; release must be called when done.
func (p *filePool) acquire(path string) (*os.File, func(), error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pf, ok := p.byPath[path]
	if ok {
		p.lru.MoveToFront(pf.elem)
	} else {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
		if err != nil {
			return nil, nil, err
		}
		pf = &pooledFile{path: path, f: f}
		pf.elem = p.lru.PushFront(pf)
		p.byPath[path] = pf
		p.evictLocked()
	}
	pf.refs++
	var once sync.Once
	return pf.f, func() { once.Do(func() { p.release(pf) }) }, nil
}

func (p *filePool) release(pf *pooledFile) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pf.refs--
	if pf.refs == 0 && pf.gone {
		_ = pf.f.Close()
		return
	}
	p.evictLocked()
}

// evictLocked closes idle files beyond the bound, least recently used first.
func (p *filePool) evictLocked() {
	for e := p.lru.Back(); e != nil && p.lru.Len() > p.max; {
		prev := e.Prev()
		if pf := e.Value.(*pooledFile); pf.refs == 0 {
			p.lru.Remove(e)
			delete(p.byPath, pf.path)
			_ = pf.f.Close()
		}
		e = prev
	}
	p.report()
}

func (p *filePool) report() {
	if p.onCount != nil {
		p.onCount(p.lru.Len())
	}
}

// forget drops path from the pool (it is being renamed); the descriptor closes once unused.
func (p *filePool) forget(path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pf, ok := p.byPath[path]; ok {
		p.dropLocked(pf)
	}
	p.report()
}

// dropLocked removes pf from the pool; its descriptor closes now or when its last user is done.
func (p *filePool) dropLocked(pf *pooledFile) {
	delete(p.byPath, pf.path)
	p.lru.Remove(pf.elem)
	pf.gone = true
	if pf.refs == 0 {
		_ = pf.f.Close()
	}
}

// closeAll closes every idle descriptor; used on shutdown after appends drained.
func (p *filePool) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pf := range p.byPath {
		p.dropLocked(pf)
	}
	p.report()
}
