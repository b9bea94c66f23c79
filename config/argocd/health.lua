-- Argo CD health of every sessions.agents.dev kind (Agent, SessionPolicy, AgentSession,
-- SessionSend, SubagentRun, ToolApproval, SessionSchedule,
-- SessionHook), read from the same conditions kstatus (Flux) reads:
--   Progressing  until the operator has observed this generation, or while a send or run
--                works (Reconciling);
--   Degraded     when Stalled: an Agent, SessionPolicy or session not Ready until something
--                changes (its spec, a Secret, the egress allow list), a send or run that
--                failed or timed out;
--   Suspended    while a ToolApproval waits for a person (Decided is False),
--                or a SessionSchedule with spec.suspend (kstatus reads it Current);
--   Healthy      when Ready, Archived (a finished session), Completed, Cancelled or Decided
--                (a ToolApproval approved, denied or expired).
local conditions = {}
if obj.status ~= nil then
  for _, c in ipairs(obj.status.conditions or {}) do
    conditions[c.type] = c
  end
end
local function holds(t)
  return conditions[t] ~= nil and conditions[t].status == "True"
end
local function say(t)
  return t .. ": " .. (conditions[t].message or "")
end
if obj.status == nil or obj.status.observedGeneration ~= obj.metadata.generation then
  return {status = "Progressing", message = "Waiting for the operator to observe this generation"}
end
if holds("Stalled") then
  return {status = "Degraded", message = (conditions.Stalled.reason or "Stalled") .. ": " .. (conditions.Stalled.message or "")}
end
if holds("Reconciling") then
  return {status = "Progressing", message = conditions.Reconciling.message or ""}
end
if obj.kind == "SessionSchedule" and obj.spec ~= nil and obj.spec.suspend == true then
  return {status = "Suspended", message = "spec.suspend: no new ticks"}
end
for _, t in ipairs({"Ready", "Archived", "Completed", "Cancelled", "Decided"}) do
  if holds(t) then
    return {status = "Healthy", message = say(t)}
  end
end
if conditions.Decided ~= nil then
  return {status = "Suspended", message = say("Decided")}
end
if conditions.Ready ~= nil then
  return {status = "Degraded", message = say("Ready")}
end
return {status = "Progressing", message = "Waiting for the operator"}
