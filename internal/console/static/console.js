// The console reads /events (sessions live) and the history API (a transcript) with the
// bearer token the person signs in with; it never polls. Plain DOM, no frameworks.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const state = { token: "", ns: "", sessions: new Map(), open: "", work: new Map(), abort: null, lastId: "" };

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
  });

  // follow reads the event stream with fetch (EventSource cannot send a bearer token) and
  // reconnects with Last-Event-ID, so nothing is lost across a dropped connection.
  async function follow() {
    const q = new URLSearchParams({ namespace: state.ns, kinds: "sessions.changed,session.message,sends.changed,runs.changed" });
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
      case "reset": state.sessions.clear(); renderSessions(); if (state.open) openSession(state.open); break;
      case "end": status("stream ended: " + (data.reason || "")); break;
      case "sessions.changed": sessionChanged(data); break;
      case "session.message": if (data.sessionKey === state.open) appendRecord(data.record); break;
      case "sends.changed": case "runs.changed": workChanged(ev.event, data); break;
    }
  }

  function sessionChanged(c) {
    const row = state.sessions.get(c.sessionKey) || { key: c.sessionKey };
    if (c.object) {
      const st = c.object.status || {};
      row.kind = st.kind; row.channel = st.channel || (c.object.spec || {}).channel;
      row.messages = st.messageCount ?? row.messages; row.preview = st.lastMessagePreview ?? row.preview;
      row.updated = st.updatedAt || row.updated;
    }
    if (c.stats) { row.messages = c.stats.messageCount; row.preview = c.stats.lastPreview; row.updated = c.stats.updatedAt; }
    row.phase = c.phase === "archived" ? "archived" : row.phase;
    state.sessions.set(c.sessionKey, row);
    renderSessions();
  }

  // cell adds a column; its label heads it on a narrow screen, where the table is stacked.
  function cell(tr, text, label) {
    const td = document.createElement("td");
    td.textContent = text ?? "";
    if (label) td.dataset.label = label;
    tr.appendChild(td);
    return td;
  }

  function renderSessions() {
    const body = $("sessions").tBodies[0];
    body.replaceChildren();
    const rows = [...state.sessions.values()].sort((a, b) => String(b.updated || "").localeCompare(String(a.updated || "")));
    for (const s of rows) {
      const tr = document.createElement("tr");
      const b = document.createElement("button");
      b.textContent = s.key + (s.phase === "archived" ? " (archived)" : "");
      b.addEventListener("click", () => openSession(s.key));
      cell(tr, "").appendChild(b);
      cell(tr, s.kind, "kind"); cell(tr, s.channel, "channel"); cell(tr, s.messages, "messages");
      cell(tr, s.preview, "last"); cell(tr, s.updated, "updated");
      body.appendChild(tr);
    }
  }

  async function openSession(key) {
    state.open = key;
    state.work.clear();
    $("detail").hidden = false;
    $("detail-h").textContent = key;
    $("transcript").replaceChildren();
    $("work").replaceChildren();
    const q = new URLSearchParams({ namespace: state.ns, limit: "200", includeTools: "1" });
    const resp = await fetch("/sessions/" + encodeURIComponent(key) + "/history?" + q, { headers: auth(), cache: "no-store" });
    if (!resp.ok) { status("history: " + resp.status); return; }
    const page = await resp.json();
    for (const r of page.messages || []) appendRecord(r);
    $("detail-h").tabIndex = -1;
    $("detail-h").focus();
  }

  // appendRecord shows one record: text, tool calls and tool results folded, provenance.
  function appendRecord(r) {
    const m = r.message || {};
    const li = document.createElement("li");
    li.className = m.role;
    li.dataset.seq = r.seq;
    const who = document.createElement("span");
    who.className = "who";
    who.textContent = m.role + (m.toolName ? " " + m.toolName : "");
    li.appendChild(who);
    const p = m.provenance;
    if (p && p.sourceSessionKey) {
      const from = document.createElement("span");
      from.className = "from";
      from.textContent = "from " + p.sourceSessionKey + (p.sourceTool ? " via " + p.sourceTool : "") + " ";
      li.appendChild(from);
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

  // workChanged lists the open session's sends and runs with their steps and outcome.
  function workChanged(kind, c) {
    if (c.sessionKey !== state.open || !c.object) return;
    const o = c.object, st = o.status || {};
    const what = kind === "sends.changed" ? "send" : "run";
    const parts = [what, o.metadata.name, st.phase || st.status || "", st.result || "", st.error || ""];
    if (st.steps) parts.push("steps: " + st.steps.map((s) => s.name + "=" + (s.phase || s.status || "")).join(", "));
    state.work.set(o.metadata.name, parts.filter(Boolean).join(" · "));
    const ul = $("work");
    ul.replaceChildren();
    for (const text of state.work.values()) { const li = document.createElement("li"); li.textContent = text; ul.appendChild(li); }
  }
})();
