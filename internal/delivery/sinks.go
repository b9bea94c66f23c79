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

package delivery

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/utils/lru"
)

// The chat kinds of a SessionPolicy sink.
const (
	KindTelegram = "telegram"
	KindDiscord  = "discord"
	KindWhatsApp = "whatsapp"
	KindSlack    = "slack"
)

// ChatSink is a chat sink of a SessionPolicy, with its token.
type ChatSink struct {
	// Kind is telegram, discord, whatsapp or slack.
	Kind string
	// Channel is the channel whose announces it takes (a metric label).
	Channel string
	// APIURL is the platform's origin; "" is its public API.
	APIURL string
	Token  string
	// PhoneNumberID and APIVersion are a whatsapp sink's.
	PhoneNumberID, APIVersion string
	// RatePerMinute bounds its posts; 0 is the kind's default.
	RatePerMinute int
	// Key names the sink for its rate limit (namespace/channel).
	Key string
}

// defaultRatePerMinute is each kind's rate when the sink names none: under what the
// platforms allow a bot in one chat (Telegram about 20 a minute in a group, Discord 5 in
// 5 seconds, Slack about one a second, WhatsApp far more).
var defaultRatePerMinute = map[string]int{KindTelegram: 20, KindDiscord: 60, KindSlack: 60, KindWhatsApp: 600}

// publicAPI is each kind's API origin when the sink names none.
var publicAPI = map[string]string{KindTelegram: TelegramAPI, KindDiscord: DiscordAPI, KindSlack: SlackAPI, KindWhatsApp: WhatsAppAPI}

// FormatOf is the format of a chat kind (false for another kind).
func FormatOf(kind string) (Format, bool) {
	switch kind {
	case KindTelegram:
		return TelegramFormat, true
	case KindDiscord:
		return DiscordFormat, true
	case KindWhatsApp:
		return WhatsAppFormat, true
	case KindSlack:
		return SlackFormat, true
	}
	return Format{}, false
}

// APIURLOf is the origin a chat sink posts to.
func APIURLOf(s ChatSink) string {
	if s.APIURL != "" {
		return strings.TrimSuffix(s.APIURL, "/")
	}
	return publicAPI[s.Kind]
}

// chat is the platform client of s, on the deliverer's egress client, whose answers are
// bounded (egress.SinkLimit) before any client library decodes them.
func (d *Deliverer) chat(s ChatSink) (Chat, error) {
	c := d.HTTP
	api := APIURLOf(s)
	switch s.Kind {
	case KindTelegram:
		return &telegram{api: api, token: s.Token, http: c}, nil
	case KindDiscord:
		return &discord{api: api, token: s.Token, http: c}, nil
	case KindWhatsApp:
		return &whatsapp{api: api, token: s.Token, version: s.APIVersion, phoneNumberID: s.PhoneNumberID, http: c}, nil
	case KindSlack:
		return &slackPoster{api: api, token: s.Token, http: c}, nil
	}
	return nil, fmt.Errorf("sink kind %q is not a chat kind", s.Kind)
}

// Throttled is a part the sink's own rate limit holds back: nothing was sent; try again
// after Wait.
type Throttled struct{ Wait time.Duration }

func (t *Throttled) Error() string {
	return fmt.Sprintf("held by the sink's ratePerMinute for %s", t.Wait.Round(time.Millisecond))
}

// Post sends one part to a chat sink: through its rate limit, timed and counted, with any
// error as a *PostError (or *Throttled) whose text holds no token.
func (d *Deliverer) Post(ctx context.Context, s ChatSink, m ChatMessage) (Posted, error) {
	chat, err := d.chat(s)
	if err != nil {
		return Posted{}, &PostError{Text: err.Error()}
	}
	if wait := d.limits.reserve(s, d.now()); wait > 0 {
		deliveries.WithLabelValues(s.Channel, OutcomeThrottled).Inc()
		return Posted{}, &Throttled{Wait: wait}
	}
	start := d.now()
	posted, err := chat.Post(ctx, m)
	deliverySeconds.WithLabelValues(s.Channel).Observe(d.now().Sub(start).Seconds())
	if err != nil {
		pe := redacted(err, s.Token)
		outcome := OutcomeFailed
		if pe.Retry {
			outcome = OutcomeRetried
		}
		deliveries.WithLabelValues(s.Channel, outcome).Inc()
		return Posted{}, pe
	}
	deliveries.WithLabelValues(s.Channel, OutcomeDelivered).Inc()
	return posted, nil
}

func (d *Deliverer) now() time.Time {
	if d.Clock == nil {
		return time.Now()
	}
	return d.Clock.Now()
}

// maxLimiters bounds the sinks whose rate limits are kept (the least recently used go).
const maxLimiters = 4096

// sinkLimits are the token buckets of the chat sinks, one per sink key.
type sinkLimits struct {
	mu    sync.Mutex
	cache *lru.Cache
}

// reserve takes a token of s's bucket at now, or says how long until one is free (and
// takes none).
func (l *sinkLimits) reserve(s ChatSink, now time.Time) time.Duration {
	perMinute := s.RatePerMinute
	if perMinute <= 0 {
		perMinute = defaultRatePerMinute[s.Kind]
	}
	if perMinute <= 0 {
		return 0
	}
	limit := rate.Limit(float64(perMinute) / 60)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cache == nil {
		l.cache = lru.New(maxLimiters)
	}
	var lim *rate.Limiter
	if v, ok := l.cache.Get(s.Key); ok {
		lim = v.(*rate.Limiter)
		if lim.Limit() != limit || lim.Burst() != perMinute {
			lim.SetLimitAt(now, limit)
			lim.SetBurstAt(now, perMinute)
		}
	} else {
		lim = rate.NewLimiter(limit, perMinute)
		l.cache.Add(s.Key, lim)
	}
	r := lim.ReserveN(now, 1)
	if wait := r.DelayFrom(now); wait > 0 {
		r.CancelAt(now)
		return wait
	}
	return 0
}
