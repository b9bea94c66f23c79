// The console reads /events (sessions live) and the history API (a transcript) with the
// bearer token the person signs in with; it never polls. Its stream carries every session's
// changes, and the transcript (session.message, session.delta) of the open session alone:
// opening a session subscribes the stream to it and drops the one open before
// (POST /events/{streamId}/subscriptions). Its writes (a send, a cancel) and
// its first lists go to /console/ on the same listener, made as the signed-in person.
// Plain DOM, no frameworks.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const state = { token: "", ns: "", sessions: new Map(), open: "", work: new Map(), abort: null, lastId: "", approvals: new Map(), ended: null, stream: "", subscribed: "" };

  function status(text) { $("status").textContent = text; }
  function auth() { return { Authorization: "Bearer " + state.token }; }

  $("signin").addEventListener("submit", (e) => {
    e.preventDefault();
    state.token = $("token").value.trim();
    state.ns = $("namespace").value.trim() || "default";
    $("token").value = "";
    $("signin").hidden = true;
    $("app").hidden = false;
    follow();
    loadSessions();
    loadApprovals();
    // Relative times ("2m ago", "in 9m") age without any event: refresh their text in place
    // (focus stays where it is), never poll.
    setInterval(() => { for (const el of document.querySelectorAll("time[datetime]")) el.textContent = relative(el); }, 30000);
  });

  // search asks GET /search for the messages holding every word; each hit opens its session
  // at the hit (the history page before its cursor ends with it).
  $("search").addEventListener("submit", async (e) => {
    e.preventDefault();
    const q = new URLSearchParams({ namespace: state.ns, q: $("search-q").value, limit: "20" });
    const resp = await fetch("/search?" + q, { headers: auth(), cache: "no-store" });
    if (!resp.ok) { status("search: " + resp.status); return; }
    const res = await resp.json();
    const items = (res.hits || []).map((h) => {
      const li = document.createElement("li");
      const open = document.createElement("button");
      open.type = "button";
      open.textContent = h.sessionKey + " #" + h.seq;
      open.addEventListener("click", () => openSession(h.sessionKey, h.cursor));
      const ex = document.createElement("span");
      ex.textContent = " " + h.excerpt;
      li.append(open, ex);
      return li;
    });
    $("hits").replaceChildren(...items);
    status(items.length ? items.length + " matches" : "no matches");
  });

  $("filter-kind").addEventListener("change", renderSessions);
  $("filter-text").addEventListener("input", renderSessions);

  // action POSTs a console action as the signed-in person; it returns the JSON answer or
  // throws with the server's error text.
  async function action(path, body) {
    const resp = await fetch("/console/" + path + "?" + new URLSearchParams({ namespace: state.ns }), {
      method: "POST", headers: { ...auth(), "Content-Type": "application/json" }, body: JSON.stringify(body), cache: "no-store",
    });
    const out = await resp.json().catch(() => ({}));
    if (!resp.ok) throw new Error(out.error || resp.status + " " + resp.statusText);
    return out;
  }

  // loadSessions lists the sessions there are at sign-in, with their counters and usage; the
  // event stream keeps them current.
  async function loadSessions() {
    try {
      const out = await action("sessions", { limit: 200 });
      for (const r of out.sessions || []) {
        if (state.sessions.has(r.key)) continue;
        state.sessions.set(r.key, {
          key: r.key, kind: r.kind, channel: r.channel, label: r.label, displayName: r.displayName,
          messages: r.messageCount, preview: r.lastMessagePreview, updated: new Date(r.updatedAt).toISOString(),
          usage: usageOf(r.inputTokens, r.outputTokens, r.usage), sandbox: r.sandbox || null,
        });
      }
      renderSessions();
      if (state.open) renderUsage();
    } catch (err) {
      status("sessions: " + err.message);
    }
  }

  $("send").addEventListener("submit", async (e) => {
    e.preventDefault();
    const message = $("message").value;
    if (!state.open || !message.trim()) return;
    const button = $("send").querySelector("button");
    button.disabled = true;
    try {
      const out = await action("send", { sessionKey: state.open, message });
      $("message").value = "";
      status("sent: " + out.name);
    } catch (err) {
      status("send refused: " + err.message);
    } finally {
      button.disabled = false;
    }
  });

  async function cancel(kind, name) {
    try {
      await action("cancel", { kind, name });
      status("cancel requested: " + name);
    } catch (err) {
      status("cancel refused: " + err.message);
    }
  }

  // follow reads the event stream with fetch (EventSource cannot send a bearer token) and
  // reconnects with Last-Event-ID, so nothing is lost across a dropped connection.
  async function follow() {
    // No session.message or session.delta of the whole namespace: the open session's come by
    // its subscription.
    const q = new URLSearchParams({ namespace: state.ns, kinds: "sessions.changed,sends.changed,runs.changed,approvals.changed" });
    for (let delay = 500; ; delay = Math.min(delay * 2, 15000)) {
      try {
        const headers = auth();
        if (state.lastId) headers["Last-Event-ID"] = state.lastId;
        const resp = await fetch("/events?" + q, { headers, cache: "no-store" });
        if (resp.status === 401 || resp.status === 403) { status("Not allowed: " + (await resp.text())); return; }
        if (!resp.ok) throw new Error(resp.statusText);
        status("live");
        delay = 500;
        await readEvents(resp.body.getReader());
      } catch (err) {
        status("reconnecting: " + err.message);
      }
      await new Promise((r) => setTimeout(r, delay));
    }
  }

  async function readEvents(reader) {
    const dec = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += dec.decode(value, { stream: true });
      let i;
      while ((i = buf.search(/\r?\n\r?\n/)) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i).replace(/^\r?\n\r?\n/, "");
        const ev = { id: "", event: "message", data: [] };
        for (const line of block.split(/\r?\n/)) {
          if (line.startsWith(":")) continue;
          const c = line.indexOf(":");
          const field = c < 0 ? line : line.slice(0, c);
          const val = c < 0 ? "" : line.slice(c + 1).replace(/^ /, "");
          if (field === "id") ev.id = val;
          else if (field === "event") ev.event = val;
          else if (field === "data") ev.data.push(val);
        }
        if (ev.data.length) handle(ev);
      }
    }
  }

  function handle(ev) {
    if (ev.id) state.lastId = ev.id;
    const data = JSON.parse(ev.data.join("\n"));
    switch (ev.event) {
      case "stream": streamOpened(data); break;
      case "reset": state.sessions.clear(); renderSessions(); if (state.open) openSession(state.open); loadApprovals(); break;
      case "end": status("stream ended: " + (data.reason || "")); break;
      case "sessions.changed": sessionChanged(data); break;
      case "session.message": if (data.sessionKey === state.open) { endLive(data.record); appendRecord(data.record); } break;
      case "session.delta": if (data.sessionKey === state.open) liveDelta(data); break;
      case "sends.changed": case "runs.changed": workChanged(ev.event, data); break;
      case "approvals.changed": approvalChanged(data); break;
    }
  }

  // streamOpened takes a (re)connected stream's id; a session open across a reconnect is
  // subscribed again, and its messages from the gap are read from its history.
  async function streamOpened(info) {
    state.stream = info.subscriptions || "";
    state.subscribed = "";
    const key = state.open;
    if (!key) return;
    if (await subscribe(key) && state.open === key) catchUp(key);
  }

  // subscribe makes the stream carry session key's transcript and drop the one subscribed
  // before; it says whether the stream now follows key.
  async function subscribe(key) {
    if (!state.stream) return false;
    if (state.subscribed === key) return true;
    const body = { subscribe: [key] };
    if (state.subscribed) body.unsubscribe = [state.subscribed];
    try {
      const resp = await fetch(state.stream + "?" + new URLSearchParams({ namespace: state.ns }), {
        method: "POST", headers: { ...auth(), "Content-Type": "application/json" }, body: JSON.stringify(body), cache: "no-store" });
      if (!resp.ok) { status("live transcript: " + resp.status + " " + (await resp.text())); return false; }
      state.subscribed = key;
      return true;
    } catch (err) {
      status("live transcript: " + err.message);
      return false;
    }
  }

  // catchUp appends the open session's newest messages not shown yet.
  async function catchUp(key) {
    const q = new URLSearchParams({ namespace: state.ns, limit: "200", includeTools: "1" });
    const resp = await fetch("/sessions/" + encodeURIComponent(key) + "/history?" + q, { headers: auth(), cache: "no-store" });
    if (!resp.ok || state.open !== key) return;
    const page = await resp.json();
    for (const r of page.messages || []) appendRecord(r);
  }

  function sessionChanged(c) {
    const row = state.sessions.get(c.sessionKey) || { key: c.sessionKey };
    if (c.object) {
      const st = c.object.status || {}, spec = c.object.spec || {};
      row.kind = st.kind || row.kind; row.channel = st.channel || spec.channel || row.channel;
      row.label = spec.label; row.displayName = spec.displayName;
      row.messages = st.messageCount ?? row.messages; row.preview = st.lastMessagePreview ?? row.preview;
      row.updated = st.updatedAt || row.updated || (c.object.metadata || {}).creationTimestamp;
      if (st.usage || st.inputTokens || st.outputTokens) row.usage = usageOf(st.inputTokens, st.outputTokens, st.usage);
      row.sandbox = st.sandbox || null;
    }
    if (c.stats) {
      const s = c.stats;
      row.messages = s.messageCount; row.preview = s.lastPreview; row.updated = s.updatedAt;
      // A commit's counters are the transcript's own: exact, and newer than the object's.
      row.usage = usageOf(s.inputTokens, s.outputTokens, s.costNanos ? { cost: String(s.costNanos / 1e9), currency: s.currency } : row.usage);
    }
    row.phase = c.phase === "archived" ? "archived" : row.phase;
    state.sessions.set(c.sessionKey, row);
    renderSessions();
    if (c.sessionKey === state.open) renderUsage();
  }

  // usageOf is what the console shows of a usage: tokens and, once a turn was priced, cost.
  function usageOf(input, output, u) {
    u = u || {};
    return { input: u.inputTokens ?? input ?? 0, output: u.outputTokens ?? output ?? 0, cost: u.cost || "", currency: u.currency || "" };
  }

  // costText is a cost as a person reads it: "0.0123 USD"; "" when nothing was priced.
  function costText(u) {
    if (!u || !u.cost) return "";
    return Number(u.cost).toLocaleString("en", { maximumSignificantDigits: 4 }) + (u.currency ? " " + u.currency : "");
  }

  // ago is a time relative to now ("2m ago"), for a column a person scans; the exact time
  // is in its title.
  function ago(iso) {
    const t = Date.parse(iso);
    if (Number.isNaN(t)) return "";
    const s = Math.max(0, Math.round((Date.now() - t) / 1000));
    if (s < 60) return s + "s ago";
    if (s < 3600) return Math.floor(s / 60) + "m ago";
    if (s < 86400) return Math.floor(s / 3600) + "h ago";
    return Math.floor(s / 86400) + "d ago";
  }

  // until is a time still to come relative to now ("in 9m"); "now" once it passed.
  function until(iso) {
    const t = Date.parse(iso);
    if (Number.isNaN(t)) return "";
    const s = Math.round((t - Date.now()) / 1000);
    if (s <= 0) return "now";
    if (s < 60) return "in " + s + "s";
    if (s < 3600) return "in " + Math.floor(s / 60) + "m";
    if (s < 86400) return "in " + Math.floor(s / 3600) + "h";
    return "in " + Math.floor(s / 86400) + "d";
  }

  // relative is a <time>'s text: how long ago, or, for one marked future, how long until.
  function relative(el) { return el.dataset.future ? until(el.dateTime) : ago(el.dateTime); }

  // timeEl is a <time> showing iso as "2m ago" (or, future, "in 9m"), the full time on hover.
  function timeEl(iso, future) {
    const el = document.createElement("time");
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return el;
    el.dateTime = d.toISOString();
    el.title = d.toISOString();
    if (future) el.dataset.future = "1";
    el.textContent = relative(el);
    return el;
  }

  // isSubagent tells a sessions_spawn child by its key (agent:<id>:subagent:<uuid>).
  function isSubagent(key) { return /^agent:[^:]+:subagent:/.test(key); }

  // shown says whether a session passes the filters: its kind (or "subagent") and a text
  // found in its key, label or display name.
  function shown(s) {
    const kind = $("filter-kind").value, text = $("filter-text").value.trim().toLowerCase();
    if (kind === "subagent" ? !isSubagent(s.key) : kind && s.kind !== kind) return false;
    return !text || [s.key, s.label, s.displayName].some((v) => String(v || "").toLowerCase().includes(text));
  }

  function renderUsage() {
    const s = state.sessions.get(state.open) || {};
    const u = s.usage || usageOf();
    const cost = costText(u);
    $("usage").textContent = "Usage: " + u.input.toLocaleString("en") + " input · " + u.output.toLocaleString("en") +
      " output tokens · cost " + (cost || "not priced");
    renderSandbox(s.sandbox);
  }

  // renderSandbox shows the open session's sandbox as kubectl sessions sandbox does: its
  // state, its Pod (named after its Sandbox), its runtime and when a tool last ran there.
  function renderSandbox(sb) {
    const p = $("sandbox");
    p.hidden = !sb;
    if (!sb) { p.replaceChildren(); return; }
    const parts = ["Sandbox: " + (sb.phase || "Claimed"), "Pod " + (sb.sandbox || "not bound yet"), "runtime " + (sb.runtimeClassName || "default")];
    const nodes = [parts.join(" · ") + " · last used "];
    nodes.push(sb.lastUsed ? timeEl(sb.lastUsed) : "never");
    if (sb.message) nodes.push(" · " + sb.message);
    p.dataset.phase = sb.phase || "Claimed";
    p.replaceChildren(...nodes);
  }

  // cell adds a column; its label heads it on a narrow screen, where the table is stacked.
  function cell(tr, text, label) {
    const td = document.createElement("td");
    td.textContent = text ?? "";
    if (label) td.dataset.label = label;
    tr.appendChild(td);
    return td;
  }

  // renderSessions updates the table in place: a session's row keeps its elements while
  // events change it, so a keyboard user's focus (or a click on its way) is not lost to a
  // row rebuilt under it.
  const sessionRows = new Map();
  function renderSessions() {
    const body = $("sessions").tBodies[0];
    const all = [...state.sessions.values()].sort((a, b) => (Date.parse(b.updated) || 0) - (Date.parse(a.updated) || 0));
    const rows = all.filter(shown);
    const want = new Set(rows.map((s) => s.key));
    for (const key of sessionRows.keys()) if (!want.has(key)) sessionRows.delete(key);
    place(body, rows.map((s) => {
      let tr = sessionRows.get(s.key);
      if (!tr) {
        tr = sessionRow(s.key);
        sessionRows.set(s.key, tr);
      }
      fillSessionRow(tr, s);
      return tr;
    }));
    $("shown").textContent = rows.length === all.length ? all.length + " sessions" : rows.length + " of " + all.length + " sessions";
  }

  // sessionRow is a new row for key: its button opens the session, its cells are filled by
  // fillSessionRow.
  function sessionRow(key) {
    const tr = document.createElement("tr");
    tr.dataset.key = key;
    const b = document.createElement("button");
    b.addEventListener("click", () => openSession(key));
    cell(tr, "").appendChild(b);
    for (const label of ["kind", "channel", "messages", "last", "cost", "updated"]) cell(tr, "", label);
    return tr;
  }

  // fillSessionRow writes s into its row, touching only what changed.
  function fillSessionRow(tr, s) {
    const [first, kind, channel, messages, last, cost, updated] = tr.cells;
    setText(first.querySelector("button"), s.key + (s.phase === "archived" ? " (archived)" : ""));
    const name = s.label || s.displayName;
    let small = first.querySelector("small.label");
    if (name && !small) {
      small = document.createElement("small");
      small.className = "label";
      first.appendChild(small);
    }
    if (small && !name) small.remove();
    else if (small) setText(small, name);
    setText(kind, isSubagent(s.key) ? s.kind + " · subagent" : s.kind);
    setText(channel, s.channel);
    setText(messages, s.messages);
    setText(last, s.preview);
    setText(cost, costText(s.usage));
    const t = updated.querySelector("time"), now = timeEl(s.updated);
    if (!t || t.title !== now.title || t.textContent !== now.textContent) updated.replaceChildren(now);
  }

  // setText changes an element's text only when it differs.
  function setText(el, text) {
    text = String(text ?? "");
    if (el.textContent !== text) el.textContent = text;
  }

  // place makes parent's children exactly nodes, in order, moving only those out of place:
  // an element that stays keeps its identity, and one that moved gets its focus back.
  function place(parent, nodes) {
    const active = document.activeElement;
    nodes.forEach((n, i) => {
      if (parent.children[i] !== n) parent.insertBefore(n, parent.children[i] || null);
    });
    while (parent.children.length > nodes.length) parent.lastElementChild.remove();
    if (active && active !== document.activeElement && active.isConnected) active.focus();
  }

  async function openSession(key, cursor) {
    const from = document.activeElement;
    state.open = key;
    state.work.clear();
    $("send").hidden = false;
    $("detail").hidden = false;
    $("detail-h").textContent = key;
    renderUsage();
    $("transcript").replaceChildren();
    $("work").replaceChildren();
    renderApprovals();
    // Live first, then the history: nothing falls between them (a record in both shows once).
    await subscribe(key);
    if (state.open !== key) return;
    const q = new URLSearchParams({ namespace: state.ns, limit: "200", includeTools: "1" });
    if (cursor) q.set("cursor", cursor);
    const resp = await fetch("/sessions/" + encodeURIComponent(key) + "/history?" + q, { headers: auth(), cache: "no-store" });
    if (!resp.ok) { status("history: " + resp.status); return; }
    const page = await resp.json();
    for (const r of page.messages || []) appendRecord(r);
    // The heading takes the focus, unless the person already moved on (say, into the
    // message box) while the history loaded: what they type must not land elsewhere.
    $("detail-h").tabIndex = -1;
    if (document.activeElement === from || document.activeElement === document.body) $("detail-h").focus();
    loadWork(key);
  }

  // loadWork lists the sends and runs the session already has, and the runs under those
  // (the run tree); an event that arrived first is newer and stays.
  async function loadWork(key) {
    try {
      const out = await action("work", { sessionKey: key });
      if (state.open !== key) return;
      const keep = (kind, o) => { if (!state.work.has(kind + "/" + o.metadata.name)) state.work.set(kind + "/" + o.metadata.name, { send: kind === "sends.changed", o }); };
      for (const o of out.sends || []) keep("sends.changed", o);
      for (const o of [...(out.runs || []), ...(out.descendants || [])]) keep("runs.changed", o);
      renderWork();
    } catch (err) {
      status("sends and runs: " + err.message);
    }
  }

  // appendRecord shows one record: text, tool calls and tool results folded, provenance.
  function appendRecord(r) {
    if (r.seq && $("transcript").querySelector('li[data-seq="' + Number(r.seq) + '"]')) return; // shown already
    const m = r.message || {};
    const li = document.createElement("li");
    li.className = m.role;
    li.dataset.seq = r.seq;
    const who = document.createElement("span");
    who.className = "who";
    who.textContent = m.role + (m.toolName ? " " + m.toolName : "");
    li.appendChild(who);
    const p = m.provenance;
    const source = p && (p.sourceSessionKey ? p.sourceSessionKey + (p.sourceTool ? " via " + p.sourceTool : "")
      : p.kind === "cron" && p.schedule ? "schedule " + p.schedule
      : p.kind === "hook" && p.hook ? "hook " + p.hook + (p.deliveryId ? " (delivery " + p.deliveryId + ")" : "") : "");
    if (source) {
      const from = document.createElement("span");
      from.className = "from";
      from.textContent = "from " + source + " ";
      li.appendChild(from);
    }
    if (m.role === "compaction") {
      // A summary of older history, folded: the messages of its range stay in the
      // transcript, the model reads the summary in their place.
      const c = m.compaction || {};
      const d = document.createElement("details");
      d.className = "compaction";
      const s = document.createElement("summary");
      s.textContent = "compacted messages " + c.fromSeq + "–" + c.toSeq + " (" + c.tokensBefore + " → " + c.tokensAfter + " tokens)";
      d.append(s, document.createTextNode((m.content || []).map((b) => b.text || "").join("")));
      li.appendChild(d);
      $("transcript").appendChild(li);
      return;
    }
    for (const b of m.content || []) {
      if (b.type === "toolCall" || m.role === "toolResult") {
        const d = document.createElement("details");
        const s = document.createElement("summary");
        s.textContent = b.type === "toolCall" ? "call " + b.name : "result";
        d.append(s, document.createTextNode(b.type === "toolCall" ? JSON.stringify(b.arguments) : b.text || ""));
        li.appendChild(d);
      } else if (b.text) {
        li.appendChild(document.createTextNode(b.text));
      }
    }
    $("transcript").appendChild(li);
  }

  // liveDelta writes a reply as the model streams it, into an in-progress entry per model
  // call (run and step); the stored message replaces it (endLive). Pieces arriving after
  // their message are of an ended call and dropped.
  const endedLive = new Set();
  function liveDelta(d) {
    const key = d.runId + "/" + d.step;
    if (endedLive.has(key)) return;
    let li = [...$("transcript").querySelectorAll("li.live")].find((e) => e.dataset.live === key);
    if (!li) {
      li = document.createElement("li");
      li.className = "assistant live";
      li.dataset.live = key;
      li.setAttribute("aria-busy", "true");
      const who = document.createElement("span");
      who.className = "who";
      who.textContent = "assistant (writing…)";
      li.appendChild(who);
      $("transcript").appendChild(li);
    }
    li.appendChild(document.createTextNode(d.text));
  }

  // endLive removes the in-progress entries an assistant record completes.
  function endLive(r) {
    if ((r.message || {}).role !== "assistant") return;
    for (const li of $("transcript").querySelectorAll("li.live")) {
      endedLive.add(li.dataset.live);
      li.remove();
    }
  }

  // workChanged lists the open session's sends (into it) and runs (it started), each with
  // its steps, outcome and, while it runs, a Cancel button; a run's event belongs to its
  // requester, so a run under one of the open session's runs joins the tree.
  function workChanged(kind, c) {
    if (!c.object) return;
    const inTree = kind === "runs.changed" && [...state.work.values()].some((w) => !w.send && (w.o.status || {}).childSessionKey === c.sessionKey);
    if (c.sessionKey !== state.open && !inTree) return;
    state.work.set(kind + "/" + c.object.metadata.name, { send: kind === "sends.changed", o: c.object });
    renderWork();
  }

  // renderWork shows the sends and the runs the open session started; a run's children
  // (the runs its child session requested) are listed inside it, and theirs inside them.
  // An item is rebuilt only when its object changed, so its Cancel button and its opened
  // details stay as they were while other items change.
  const workEls = new Map();
  function renderWork() {
    const items = [...state.work.values()];
    const top = items.filter((w) => w.send || (w.o.spec || {}).requesterSessionKey === state.open || !(w.o.spec || {}).requesterSessionKey);
    place($("work"), top.map((w) => workItem(w, items, new Set([state.open]))));
    for (const key of workEls.keys()) if (!state.work.has(key)) workEls.delete(key);
    renderApprovals(); // a run's child session may have calls waiting
  }

  function workItem(w, items, seen) {
    const { send, o } = w;
    const key = (send ? "sends.changed/" : "runs.changed/") + o.metadata.name;
    const version = o.metadata.resourceVersion || JSON.stringify(o);
    let el = workEls.get(key);
    if (!el || el.version !== version) {
      const li = el ? el.li : document.createElement("li");
      const ul = el ? el.ul : document.createElement("ul");
      const wasOpen = !!(el && li.firstElementChild && li.firstElementChild.open);
      li.dataset.name = o.metadata.name;
      li.dataset.phase = (o.status || {}).phase || "";
      li.replaceChildren(...workOwn(send, o, wasOpen));
      el = { version, li, ul };
      workEls.set(key, el);
    }
    // The run's children: runs whose requester is its child session; a session already on
    // the path is not followed again.
    const child = (o.status || {}).childSessionKey;
    const under = !send && child && !seen.has(child) ? items.filter((c) => !c.send && (c.o.spec || {}).requesterSessionKey === child) : [];
    if (under.length) {
      const path = new Set(seen).add(child);
      el.ul.className = "children";
      el.ul.setAttribute("aria-label", "Runs under run " + o.metadata.name);
      place(el.ul, under.map((c) => workItem(c, items, path)));
      if (el.ul.parentNode !== el.li) el.li.appendChild(el.ul);
    } else {
      el.ul.remove();
    }
    return el.li;
  }

  // startedBy names the SessionSchedule tick or SessionHook delivery that made a send, from
  // the labels and annotations the operator sets on it; "" for any other send.
  function startedBy(meta) {
    const l = meta.labels || {}, a = meta.annotations || {};
    if (l["sessions.agents.dev/schedule"]) {
      return "schedule " + l["sessions.agents.dev/schedule"] + (a["sessions.agents.dev/scheduled-time"] ? " (tick " + a["sessions.agents.dev/scheduled-time"] + ")" : "");
    }
    if (l["sessions.agents.dev/hook"]) {
      return "hook " + l["sessions.agents.dev/hook"] + (a["sessions.agents.dev/delivery-id"] ? " (delivery " + a["sessions.agents.dev/delivery-id"] + ")" : "");
    }
    return "";
  }

  // workOwn is an item's own elements: its steps, outcome and, while it runs, a Cancel button.
  function workOwn(send, o, open) {
    const st = o.status || {}, spec = o.spec || {}, name = o.metadata.name;
    const d = document.createElement("details");
    d.open = open;
    const sum = document.createElement("summary");
    sum.textContent = (send ? "send " : "run ") + name + " · " + (st.phase || "Pending") + (st.status ? " · " + st.status : "") +
      (st.usage && st.usage.cost ? " · cost " + costText(st.usage) : "");
    const steps = document.createElement("ol");
    steps.className = "steps";
    const step = (text) => { const x = document.createElement("li"); x.textContent = text; steps.appendChild(x); };
    if (send) {
      step("round 1 from " + (spec.fromSessionKey || startedBy(o.metadata) || "a person") + ": " + (spec.message || ""));
      for (const t of st.turns || []) {
        step("turn " + t.round + " · " + t.session + (t.skipped ? " · skipped" : "") + (t.reply ? ": " + t.reply : "") + (t.error ? " · error: " + t.error : ""));
      }
      if (st.reply) step("reply: " + st.reply);
    } else {
      step("task: " + (spec.task || ""));
      if (st.childSessionKey) step("child session " + st.childSessionKey);
      if (st.result) step("result: " + st.result);
      if (st.notes) step("notes: " + st.notes);
      if (st.stats) step("stats: " + Object.entries(st.stats).map(([k, v]) => k + " " + v).join(", "));
      if (st.usage) step("usage with its run tree: " + (st.usage.inputTokens || 0) + " input · " + (st.usage.outputTokens || 0) + " output tokens" + (st.usage.cost ? " · cost " + costText(st.usage) : ""));
    }
    const a = st.announce;
    if (a) step("announce: " + (a.status || "") + (a.target ? " to " + a.target : "") + (a.reason ? " (" + a.reason + ")" : "") + (a.message ? ": " + a.message : ""));
    if (st.error) step("error: " + st.error);
    d.append(sum, steps);
    if (st.startedAt) sum.append(" · started ", timeEl(st.startedAt));
    const own = [d];
    if (!st.completedAt && !spec.cancel) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "cancel";
      b.textContent = "Cancel";
      b.setAttribute("aria-label", "Cancel " + (send ? "send " : "run ") + name);
      b.addEventListener("click", () => cancel(send ? "send" : "run", name));
      own.push(b);
    }
    return own;
  }

  // Tool calls that wait for a person (ToolApprovals): a namespace-wide list and, in the
  // open session, its own calls and those of the runs under it. The first list comes from
  // approvals_list at sign-in; approvals.changed events add the requested ones and take the
  // decided or expired ones away. Decisions are made as the signed-in person through
  // approvals_decide: RBAC (the verb approve) judges them and the webhook records who.

  // maxArgsShown bounds the arguments shown (they are at most 8 KiB; the transcript has
  // the whole call).
  const maxArgsShown = 4096;

  // approvalOf is what the page keeps of an approval, from an approvals_list row or from
  // an event's object.
  // A budget's approval (kind Budget: a send or run tree at its budget, the SessionPolicy's
  // onExceeded: Ask) has no tool: it shows what it asks instead of arguments.
  function approvalOf(r) {
    return { name: r.name, kind: r.kind || "Tool", tool: r.tool || "", budget: r.budget ? r.budget.message || "" : "",
      args: r.arguments || "", sessionKey: r.sessionKey, owner: r.owner, created: r.createdAt, expires: r.expiresAt };
  }
  function approvalOfObject(o) {
    const spec = o.spec || {}, owner = spec.owner || {};
    return approvalOf({ name: o.metadata.name, kind: spec.kind, tool: spec.tool, budget: spec.budget, arguments: spec.arguments,
      sessionKey: spec.sessionKey, owner: owner.kind + "/" + owner.name, createdAt: o.metadata.creationTimestamp, expiresAt: spec.expiresAt });
  }

  // loadApprovals lists what waits at sign-in (and after a reset). An approval that ended
  // while the list was on its way stays away: the event is newer than the list.
  async function loadApprovals() {
    state.ended = new Set();
    try {
      const out = await action("tools/approvals_list", {});
      state.approvals.clear();
      for (const r of out.approvals || []) if (!state.ended.has(r.name)) state.approvals.set(r.name, approvalOf(r));
      $("approvals-note").textContent = "";
    } catch (err) {
      $("approvals-note").textContent = "Approvals cannot be listed: " + err.message;
    } finally {
      state.ended = null;
    }
    renderApprovals();
  }

  function approvalChanged(c) {
    if (!c.object || !c.object.metadata) return;
    const name = c.object.metadata.name;
    if (c.phase === "requested") {
      state.approvals.set(name, approvalOfObject(c.object));
    } else {
      state.approvals.delete(name);
      if (state.ended) state.ended.add(name);
    }
    renderApprovals();
  }

  // openTree is the open session and the child sessions of the runs under it.
  function openTree() {
    const keys = new Set(state.open ? [state.open] : []);
    for (const w of state.work.values()) {
      const child = !w.send && (w.o.status || {}).childSessionKey;
      if (child) keys.add(child);
    }
    return keys;
  }

  function renderApprovals() {
    const all = [...state.approvals.values()].sort((a, b) => (Date.parse(a.created) || 0) - (Date.parse(b.created) || 0));
    syncList($("approvals"), all);
    $("approvals-count").textContent = all.length === 1 ? "1 tool call waiting" : (all.length || "no") + " tool calls waiting";
    const tree = openTree();
    const mine = all.filter((a) => tree.has(a.sessionKey));
    syncList($("session-approvals"), mine);
    const box = $("session-approvals-box");
    // The session's last waiting call went while the keyboard was on it: the box hides, so
    // the focus moves on to the namespace's list rather than to nowhere.
    if (mine.length === 0 && !box.hidden && box.contains(document.activeElement)) {
      $("approvals-h").tabIndex = -1;
      $("approvals-h").focus();
    }
    box.hidden = mine.length === 0;
  }

  // syncList makes ul show items in order, keeping the entries it already shows (and so a
  // reason being typed and the focus) as they are.
  function syncList(ul, items) {
    const want = new Set(items.map((a) => a.name));
    for (const li of [...ul.children]) {
      if (want.has(li.dataset.name)) continue;
      // The keyboard stays in the list: focus moves on to the next call, or to its heading.
      if (li.contains(document.activeElement)) {
        const next = li.nextElementSibling || li.previousElementSibling;
        const to = next ? next.querySelector(".decide button:not([disabled])") : null;
        const heading = document.getElementById(ul.getAttribute("aria-labelledby") || "approvals-h");
        li.remove();
        if (to) to.focus();
        else { heading.tabIndex = -1; heading.focus(); }
        continue;
      }
      li.remove();
    }
    items.forEach((a, i) => {
      const at = ul.children[i];
      if (at && at.dataset.name === a.name) return;
      const have = [...ul.children].find((li) => li.dataset.name === a.name);
      ul.insertBefore(have || approvalItem(ul.id, a), at || null);
    });
  }

  // argsText is the call's arguments as a person reads them: indented JSON, bounded.
  function argsText(raw) {
    let text = raw;
    try { text = JSON.stringify(JSON.parse(raw), null, 2); } catch (_) { /* truncated at 8 KiB: shown as it is */ }
    if (text.length > maxArgsShown) {
      text = text.slice(0, maxArgsShown) + "\n… " + (text.length - maxArgsShown) + " more characters (the transcript has the whole call)";
    }
    return text || "(no arguments)";
  }

  // approvalItem is one waiting call: what, where, since and until when, its arguments,
  // and Approve, and Deny with a reason (the model is told it).
  function approvalItem(list, a) {
    const li = document.createElement("li");
    li.dataset.name = a.name;
    const head = document.createElement("p");
    head.className = "what";
    const tool = document.createElement("strong");
    const budget = a.kind === "Budget";
    tool.textContent = budget ? "More budget" : a.tool;
    head.append(tool, " in ");
    const open = document.createElement("button");
    open.type = "button";
    open.className = "link";
    open.textContent = a.sessionKey;
    open.setAttribute("aria-label", "Open session " + a.sessionKey);
    open.addEventListener("click", () => openSession(a.sessionKey));
    head.append(open, " · " + (a.owner || "") + " · asked ", timeEl(a.created), " · expires ", timeEl(a.expires, true));
    const name = document.createElement("small");
    name.className = "label";
    name.textContent = a.name;
    head.appendChild(name);

    const pre = document.createElement("pre");
    pre.className = "args";
    pre.tabIndex = 0; // it may scroll: the keyboard must reach it
    pre.setAttribute("aria-label", (budget ? "What " + a.name + " asks" : "Arguments of " + a.name));
    if (budget) pre.classList.add("budget");
    pre.textContent = budget ? a.budget : argsText(a.args);

    const approve = document.createElement("button");
    approve.type = "button";
    approve.textContent = "Approve";
    approve.setAttribute("aria-label", "Approve " + a.name);

    const deny = document.createElement("form");
    deny.className = "deny";
    const id = list + "-reason-" + a.name;
    const label = document.createElement("label");
    label.htmlFor = id;
    label.textContent = "Reason to deny";
    const reason = document.createElement("input");
    reason.id = id;
    reason.required = true;
    reason.maxLength = 1024;
    reason.autocomplete = "off";
    const denyButton = document.createElement("button");
    denyButton.type = "submit";
    denyButton.textContent = "Deny";
    denyButton.setAttribute("aria-label", "Deny " + a.name);
    deny.append(label, reason, denyButton);

    const decide = async (decision, why, from) => {
      for (const b of li.querySelectorAll(".decide button")) b.disabled = true;
      try {
        await action("tools/approvals_decide", { name: a.name, decision, reason: why });
        status(decision.toLowerCase() + ": " + a.name);
        a.sent = decision;
        for (const el of document.querySelectorAll(".approvals > li")) if (el.dataset.name === a.name) showSent(el, decision);
        // A disabled button cannot hold the focus: the note saying what was sent takes it.
        const f = document.activeElement;
        if (!f || f === document.body || li.contains(f)) {
          const note = li.querySelector(".sent");
          note.tabIndex = -1;
          note.focus();
        }
      } catch (err) {
        status(decision === "Approved" ? "approve refused: " + err.message : "deny refused: " + err.message);
        for (const b of li.querySelectorAll(".decide button")) b.disabled = false;
        from.focus();
      }
    };
    approve.addEventListener("click", () => decide("Approved", "", approve));
    deny.addEventListener("submit", (e) => {
      e.preventDefault();
      const why = reason.value.trim();
      if (!why) { reason.focus(); status("a denial needs a reason: the agent is told it"); return; }
      decide("Denied", why, reason);
    });
    const actions = document.createElement("div");
    actions.className = "decide";
    actions.append(approve, deny);
    li.append(head, pre, actions);
    if (a.sent) showSent(li, a.sent);
    return li;
  }

  // showSent marks an entry whose decision was made: no more buttons to press; the
  // approvals.changed event takes it away once the operator saw the decision.
  function showSent(li, decision) {
    li.dataset.decided = decision;
    for (const b of li.querySelectorAll(".decide button")) b.disabled = true;
    let note = li.querySelector(".sent");
    if (!note) {
      note = document.createElement("span");
      note.className = "sent";
      li.querySelector(".decide").appendChild(note);
    }
    note.textContent = decision + ": waiting for the operator";
  }
})();
