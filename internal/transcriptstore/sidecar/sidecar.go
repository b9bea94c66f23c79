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

// Package sidecar is the transcript-store program's composition root: it builds the store's
// dependencies once, with one cleanup; builds each route of the public listener from a row
// of the door table (doors.go); and serves both listeners through an errgroup until the
// context ends, then drains appends before it stops.
package sidecar

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
)

// Run serves the transcript store's internal and public APIs until ctx ends, then drains:
// the internal API stops accepting and finishes in-flight appends, the store waits for the
// last fsync and ends follower streams, and the public server closes.
func Run(ctx context.Context, cfg transcriptstore.SidecarConfig) error {
	d, cleanup, err := open(ctx, withDefaults(cfg))
	if err != nil {
		return err
	}
	defer cleanup()
	public, err := publicHandler(d)
	if err != nil {
		return err
	}
	internalSrv := &http.Server{Handler: transcriptstore.InternalAPI(d.store, d.index, d.hub, d.keyring,
		transcriptstore.Indexed{FileStore: d.store, Words: d.index, Memory: d.mem}, d.retiredRecords()),
		ReadHeaderTimeout: 10 * time.Second}
	// No WriteTimeout on the public server: SSE streams are long-lived and set per-write deadlines.
	publicSrv := &http.Server{Handler: public, ReadHeaderTimeout: 10 * time.Second}

	// A server that fails ends the group's context, as ctx's end does: either drains both.
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return serve(internalSrv, d.internalLn) })
	g.Go(func() error { return serve(publicSrv, d.publicLn) })
	g.Go(func() error {
		transcriptstore.PruneArchived(gctx, transcriptstore.ArchivePruner{Files: d.store, Records: d.retired, Clock: d.cfg.Clock},
			d.cfg.ArchivedRetention, d.cfg.Clock, d.log.WithName("retention"))
		return nil
	})
	g.Go(func() error {
		<-gctx.Done()
		return d.drain(ctx, internalSrv, publicSrv)
	})
	d.ready.Store(true)
	d.log.Info("transcript-store serving", "dataDir", d.cfg.DataDir, "socket", d.internalLn.Addr().String(),
		"listen", d.publicLn.Addr().String())
	if d.cfg.Ready != nil {
		d.cfg.Ready(d.internalLn.Addr().String(), d.publicLn.Addr().String())
	}
	return g.Wait()
}

// drain stops the internal API first (in-flight appends finish), then the store (the last
// fsync; follower streams end), then the public server, within cfg.ShutdownTimeout.
func (d *deps) drain(ctx context.Context, internalSrv, publicSrv *http.Server) error {
	d.ready.Store(false)
	d.log.Info("shutting down: draining appends")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.cfg.ShutdownTimeout)
	defer cancel()
	var errs []error
	if err := internalSrv.Shutdown(sctx); err != nil {
		errs = append(errs, fmt.Errorf("internal API shutdown: %w", err))
	}
	_ = d.closeStore()
	if err := publicSrv.Shutdown(sctx); err != nil {
		errs = append(errs, fmt.Errorf("public API shutdown: %w", err))
	}
	return errors.Join(errs...)
}

func serve(srv *http.Server, ln net.Listener) error {
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
