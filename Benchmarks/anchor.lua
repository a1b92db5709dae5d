-- Benchmarks/anchor.lua: the limit of any Lua-based engine, for the library benchmark (hush-benchmark) to be compared with.
--
--   lua5.4 Benchmarks/anchor.lua STREAM.lua [PASSES]
--
-- STREAM.lua is the stream Benchmarks/generate.py wrote with --lua: the same notifications as the
-- JSONL file, as pre-built Lua tables. Outside the timed loop each one becomes the flat, read-only
-- shape a rule sees (`n.app`, `n.body`, `n.payload`, …), so the loop does no JSON and builds no view.
-- The timed loop then does, in plain Lua, what Hush does for Benchmarks/standard.lua: the active
-- focus from the schedules, the five rules of standard.lua (same code) with their changes checked
-- and applied, and the built-in decision (background and expiry, authorization, effective level,
-- collapse, scheduled summary, focus breakthrough with people, favorites, contacts, repeated calls
-- and filters, delivery style and alert, group and its summary line, reasons), remembering the
-- delivered list, groups, calls and the summary queue per user. Time is Europe/Berlin at +01:00
-- (the stream's week has no DST change), where Hush handles any zone. Prints decisions/s (CPU
-- time), and, for scale, the five rules alone (each in its pcall, no decision) per second.
-- ANCHOR_ONLY=rules (or decisions, or load) runs one untimed pass for callgrind.
-- ANCHOR_TALLY=1 prints a tally of the decisions instead, to compare with `hush eval`: on the
-- generated stream it is the engine's, decision for decision (delivery, breakthrough, level,
-- group count and summary line, placeholder).

local path, passes = arg[1], tonumber(arg[2] or "3")
assert(path, "usage: lua5.4 Benchmarks/anchor.lua STREAM.lua [PASSES]")
local raw = dofile(path)

-- MARK: the policy, as data (what standard.lua declares)

local OFFSET = 3600
local SUMMARY_TIMES = { 8 * 60, 18 * 60 }
local APPS = {
  ["com.example.chat"] = { name = "Chat" },
  ["com.example.mail"] = { name = "Mail", grouping = "app" },
  ["com.example.calendar"] = { name = "Calendar" },
  ["com.example.news"] = { name = "News", summary = true, time_sensitive = false },
  ["com.example.podcasts"] = { name = "Podcasts", summary = true },
  ["com.example.shop"] = { name = "Shop", summary = true, badges = false },
  ["com.example.bank"] = { name = "Bank", previews = "unlocked" },
  ["com.example.pager"] = { name = "Pager", critical_alerts = true },
  ["com.example.auth"] = { name = "Sign-in", grouping = "off" },
  ["com.example.fitness"] = { name = "Fitness", delivery = "quiet" },
  ["com.example.game"] = { authorization = "denied" },
}
local function resolve(bundle, s)
  s = s or {}
  return {
    authorization = s.authorization or "authorized", critical_alerts = s.critical_alerts or false,
    time_sensitive = s.time_sensitive ~= false, delivery = s.delivery or "prominent", sounds = s.sounds ~= false,
    badges = s.badges ~= false, banners = s.banners ~= false, lock_screen = s.lock_screen ~= false,
    previews = s.previews or "always", grouping = s.grouping or "automatic", summary = s.summary or false,
    name = s.name or bundle,
  }
end
local settings_cache = {}
local function settings(app)
  local s = settings_cache[app]
  if not s then s = resolve(app, APPS[app]); settings_cache[app] = s end
  return s
end

local CATEGORIES = {
  MESSAGE = { one = "%u more message from %@", other = "%u more messages from %@", hidden_one = "Message", hidden_other = "%u Messages" },
  NEW_EPISODE = { one = "%u more episode of %@", other = "%u more episodes of %@" },
  TRANSACTION = { other = "%u more transactions", hidden_other = "Account activity" },
}
local DEFAULT_SUMMARY = { one = "%u more notification", other = "%u more notifications" }

-- Handles: e-mail lower-cased, phone numbers by their digits (memoised, as an engine would).
local handle_keys = {}
local function handle_key(h)
  local k = handle_keys[h]
  if k then return k end
  if h:find("@", 1, true) then k = h:lower()
  else
    local digits = h:gsub("[%s%-%.%(%)%+]", "")
    if digits:match("^%d+$") and #digits >= 7 then k = digits:sub(-10) else k = h:lower() end
  end
  handle_keys[h] = k
  return k
end
local CONTACTS = {}
local function contact(handle, name, favorite, aliases)
  local c = { handle = handle, name = name, favorite = favorite }
  CONTACTS[handle_key(handle)] = c
  for _, a in ipairs(aliases or {}) do CONTACTS[handle_key(a)] = c end
end
contact("alice@example.com", "Alice Doe", true, { "+1 617 555 1212" })
contact("bob@example.com", "Bob Martin", false, { "+49 30 5550 1000" })
contact("erin@example.com", "Erin Park", false, { "+49 170 5550 0404" })
contact("grace@example.com", "Grace Liu", false)
contact("carol@example.com", "Carol Doe", true, { "+49 151 5550 0101" })
contact("+49 40 5550 0202", "Mum", true)
contact("dan@example.com", "Dan Weber", false, { "+49 176 5550 0303" })

local function contact_of(person)
  return person and person.handle and CONTACTS[handle_key(person.handle)]
end
local function same_person(a, b)
  local ka, kb = handle_key(a.handle), handle_key(b.handle)
  if ka == kb then return true end
  local ca, cb = CONTACTS[ka], CONTACTS[kb]
  return ca ~= nil and ca == cb
end
local function set_of(list)
  local s = {}
  for _, h in ipairs(list) do s[CONTACTS[handle_key(h)] or handle_key(h)] = true end
  return s
end
local function listed(person, people)
  local c = contact_of(person)
  return people[c or handle_key(person.handle)] == true
end

local function days(list) local s = {} for _, d in ipairs(list) do s[d] = true end return s end
local WEEKDAYS, WEEKEND, DAILY = days { 2, 3, 4, 5, 6 }, days { 1, 7 }, days { 1, 2, 3, 4, 5, 6, 7 }
local FOCUSES = {
  { name = "Sleep", schedules = { { days = DAILY, from = 23 * 60, to = 7 * 60 } },
    people = {}, favorites = true, apps = {}, calls = "favorites", repeated_calls = true, time_sensitive = true,
    silence = "always", mode = "allow", filters = {} },
  { name = "Work", schedules = { { days = WEEKDAYS, from = 9 * 60, to = 17 * 60 + 30 } },
    people = set_of { "bob@example.com", "erin@example.com", "grace@example.com" }, favorites = true,
    apps = { ["com.example.mail"] = true, ["com.example.calendar"] = true, ["com.example.pager"] = true },
    calls = "contacts", repeated_calls = true, time_sensitive = true, silence = "always", mode = "allow",
    filters = { ["com.example.mail"] = { work = true } } },
  { name = "Personal", schedules = { { days = WEEKDAYS, from = 18 * 60, to = 22 * 60 }, { days = WEEKEND, from = 9 * 60, to = 22 * 60 } },
    people = set_of { "bob@example.com", "erin@example.com" }, favorites = false,
    apps = { ["com.example.mail"] = true, ["com.example.calendar"] = true },
    calls = "allowed", repeated_calls = true, time_sensitive = true, silence = "locked", mode = "silence", filters = {} },
}

-- MARK: the five rules of standard.lua, verbatim

local RULES = {}
local function rule(name, fn) RULES[#RULES + 1] = { name = name, fn = fn } end

rule("SEV1 pages are critical", function(n, ctx)
  if n.app == "com.example.pager" and n.body:find("SEV1", 1, true) then
    return { level = "critical", reason = "SEV1 page" }
  end
end)

rule("@-mentions get through Work", function(n, ctx)
  if ctx.focus == "Work" and n.app == "com.example.chat" and n.payload.mentioned then
    return { allow = true, reason = "you were mentioned" }
  end
end)

rule("deals wait for the summary", function(n, ctx)
  if n.category == "DEAL" then
    return { summary = true, reason = "a deal can wait" }
  end
end)

local followed = { ["Night Science"] = true, ["Tech Talk"] = true }

rule("followed shows first in the summary", function(n, ctx)
  if n.app == "com.example.podcasts" and followed[n.payload.show] then
    return { relevance = 1.0, reason = "a show you follow" }
  end
end)

rule("large transactions are time-sensitive", function(n, ctx)
  if n.app == "com.example.bank" and n.category == "TRANSACTION" and (n.payload.amount or 0) >= 500 then
    return { level = "time-sensitive", reason = "a large transaction" }
  end
end)

-- MARK: pre-built views (not timed)

local LEVELS = { passive = 1, active = 2, ["time-sensitive"] = 3, critical = 4 }
local views = {}
for i, r in ipairs(raw) do
  local aps = r.payload.aps or {}
  local alert = aps.alert
  local title, subtitle, body, arg, argc
  if type(alert) == "table" then
    title, subtitle, body, arg, argc = alert.title, alert.subtitle, alert.body, alert["summary-arg"], alert["summary-arg-count"]
  elseif type(alert) == "string" then body = alert end
  local sound = aps.sound
  local critical = type(sound) == "table" and sound.critical == 1
  local headers = r.headers or {}
  local level = aps["interruption-level"] or (critical and "critical") or "active"
  views[i] = {
    id = r.id or headers["apns-collapse-id"] or ("gen-" .. i), generated = not (r.id or headers["apns-collapse-id"]),
    app = r.app, user = r.user or "default", date = r.date,
    title = title or "", subtitle = subtitle or "", body = body or "", category = aps.category, thread = aps["thread-id"],
    level = level, relevance = aps["relevance-score"], badge = aps.badge,
    sound = sound and (type(sound) == "table" and (sound.name or "default") or sound) or nil, critical = critical,
    volume = type(sound) == "table" and sound.volume or nil,
    communication = r.communication, attachments = r.attachments or {}, filter_criteria = aps["filter-criteria"],
    headers = headers, payload = r.payload,
    push_type = headers["apns-push-type"], expiration = headers["apns-expiration"],
    content_available = aps["content-available"] == 1, has_visible = alert ~= nil or sound ~= nil or aps.badge ~= nil,
    summary_arg = arg, summary_arg_count = argc or 1, has_media = r.attachments ~= nil,
  }
end
raw = nil
collectgarbage()

-- MARK: the decision (timed)

local floor = math.floor

local function local_time(t)
  local l = t + OFFSET
  local day = floor(l / 86400)
  local sec = l - day * 86400
  return day, floor(sec / 60), ((day % 7) + 4) % 7 + 1
end

local function scheduled(focus, minute, wday)
  local schedules = focus.schedules
  for i = 1, #schedules do
    local s = schedules[i]
    local wraps = s.to <= s.from
    if s.days[wday] and minute >= s.from and (wraps or minute < s.to) then return true end
    if wraps and minute < s.to and s.days[(wday + 5) % 7 + 1] then return true end
  end
  return false
end

-- Focus helpers (people, calls, repeated calls).
local function allowed(focus, p)
  if focus.mode == "silence" then return not listed(p, focus.people) end
  if listed(p, focus.people) then return true end
  local ct = contact_of(p)
  return focus.favorites and ct ~= nil and ct.favorite
end
local function caller_passes(focus, p)
  local policy = focus.calls
  if policy == "everyone" then return true
  elseif policy == "allowed" then return allowed(focus, p)
  elseif policy == "favorites" then local ct = contact_of(p); return ct ~= nil and ct.favorite
  elseif policy == "contacts" then return contact_of(p) ~= nil end
  return false
end
local function repeated(cl, now, p)
  for j = #cl - 1, 1, -1 do
    local call = cl[j]
    if now - call.date > 180 then break end
    if call.date <= now and same_person(call.caller, p) then return true end
  end
  return false
end

local function next_summary(t)
  local day = floor((t + OFFSET) / 86400)
  for d = day - 1, day + 2 do
    for _, m in ipairs(SUMMARY_TIMES) do
      local instant = d * 86400 + m * 60 - OFFSET
      if instant >= t then return instant end
    end
  end
end

local CHANGE_KEYS = { level = "string", delivery = "string", allow = "boolean", summary = "boolean", announce = "boolean",
                      relevance = "number", thread = "string", reason = "string" }

local function render(format, count, args)
  local s = (count == 1 and format.one or format.other) or format.other
  return (s:gsub("%%([u@])", function(c) if c == "u" then return tostring(count) else return args end end))
end
local function join(items)
  local k = #items
  if k == 1 then return items[1] end
  return table.concat(items, ", ", 1, k - 1) .. " and " .. items[k]
end
-- A group's summary pieces, kept up to date as members join (recomputed when one is replaced):
-- per category in order of first appearance, the sum of summary-arg-counts and the distinct
-- summary-args in order of first appearance.
local function add_piece(g, m)
  local key = m.category or ""
  local p = g.pieces[key]
  if not p then
    p = { category = m.category, count = 0, args = {}, seen = {} }
    g.pieces[key] = p; g.order[#g.order + 1] = p
  end
  p.count = p.count + m.summary_arg_count
  local a = m.summary_arg
  if a and a ~= "" and not p.seen[a] then p.seen[a] = true; p.args[#p.args + 1] = a end
end
local function rebuild(g, except)
  local d = { pieces = {}, order = {} }
  for _, m in ipairs(g.members) do if m ~= except then add_piece(d, m) end end
  return d
end

local function format_of(p)
  local c = p.category and CATEGORIES[p.category]
  return c and c.other and c or DEFAULT_SUMMARY
end
local function group_line(order)
  if #order == 0 then return nil end
  if #order == 1 then
    local p = order[1]
    local f = format_of(p)
    if f.other:find("%@", 1, true) then
      if #p.args == 0 then return render(DEFAULT_SUMMARY, p.count) end
      return render(f, p.count, join(p.args))
    end
    return render(f, p.count)
  end
  local total, mentions, parts = 0, false, {}
  for i, p in ipairs(order) do
    total = total + p.count
    local f = format_of(p)
    if f.other:find("%@", 1, true) then mentions = true end
    parts[i] = render(f, p.count)
  end
  if mentions then return render(DEFAULT_SUMMARY, total) end
  return join(parts)
end

local function run(views)
  local delivered, groups, queue, calls = {}, {}, {}, {}
  local ctx = { now = 0, focus = nil, locked = true, ringer = "ring", audio = "none" }
  local count = 0
  local decisions = {}
  for i = 1, #views do
    local n = views[i]
    local user, now = n.user, n.date
    local s = settings(n.app)
    local reasons, rules, errors = {}, {}, {}
    local d = { id = n.id, app = n.app, user = user, delivery = "alert", level = n.level, requested_level = n.level,
                reasons = reasons, rules = rules, errors = errors }

    -- summaries that fell due: their notifications join the delivered list and their groups
    local q = queue[user]
    if q and q.first and q.first <= now then
      local keep, first = {}, nil
      for _, held in ipairs(q) do
        if held.summary_at <= now then
          if not held.expiration or held.expiration >= held.summary_at then
            local ug = groups[user] or {}; groups[user] = ug
            local key = held.app .. "\0" .. held.id
            local ud = delivered[user] or {}; delivered[user] = ud
            ud[key] = held
            local gid = held.group
            if gid then
              local g = ug[gid] or { members = {}, pieces = {}, order = {} }; ug[gid] = g
              g.members[#g.members + 1] = held
              add_piece(g, held)
            end
          end
        else
          keep[#keep + 1] = held
          if not first or held.summary_at < first then first = held.summary_at end
        end
      end
      keep.first = first
      queue[user] = keep
    end

    repeat
      if n.push_type == "background" or (n.content_available and not n.has_visible) then
        d.delivery = "background"; reasons[1] = "background push"; break
      end
      if n.expiration and n.expiration ~= 0 and n.expiration < now then
        d.delivery = "dropped"; reasons[1] = "expired before it could be delivered"; break
      end
      local focus, why
      local _, minute, wday = local_time(now)
      for i = 1, #FOCUSES do
        local f = FOCUSES[i]
        if scheduled(f, minute, wday) then focus, why = f, "Focus " .. f.name .. " is on by its schedule"; break end
      end
      d.focus = focus and focus.name
      local c = n.communication
      local sender = c and c.sender
      if c and c.kind == "call" and sender then
        local cl = calls[user] or {}; calls[user] = cl
        cl[#cl + 1] = { date = now, caller = sender }
      end

      -- rules
      ctx.now, ctx.focus = now, d.focus
      local level, level_by_rule, relevance, thread = n.level, false, n.relevance, n.thread
      local delivery, allow, summary
      for ri = 1, #RULES do
        local r = RULES[ri]
        local ok, changes = pcall(r.fn, n, ctx)
        if not ok then
          errors[#errors + 1] = "rule '" .. r.name .. "': " .. tostring(changes)
        elseif changes ~= nil then
          local bad
          for k, v in pairs(changes) do
            if CHANGE_KEYS[k] ~= type(v) then bad = k; break end
          end
          if bad then
            errors[#errors + 1] = "rule '" .. r.name .. "': bad change " .. tostring(bad)
          else
            if changes.level then level = changes.level; level_by_rule = true end
            if changes.delivery then delivery = changes.delivery end
            if changes.allow ~= nil then allow = changes.allow end
            if changes.summary ~= nil then summary = changes.summary end
            if changes.relevance then relevance = changes.relevance end
            if changes.thread then thread = changes.thread end
            rules[#rules + 1] = r.name
            reasons[#reasons + 1] = "rule '" .. r.name .. "': " .. (changes.reason or "changed")
          end
        end
      end
      if delivery == "dropped" or delivery == "background" then d.delivery = delivery; break end

      -- authorization and effective level
      local entitled = level == "critical" and (s.critical_alerts or level_by_rule)
      local quiet_only = false
      if s.authorization == "denied" and not entitled then
        d.delivery = "dropped"; d.level = level
        reasons[#reasons + 1] = s.name .. " is not authorized to notify (authorization denied)"
        break
      elseif s.authorization == "provisional" and not entitled then
        quiet_only = true
      end
      if not level_by_rule then
        if level == "critical" and not s.critical_alerts then
          level = "active"; reasons[#reasons + 1] = "critical needs " .. s.name .. "'s critical-alerts permission: downgraded to active"
        elseif level == "time-sensitive" and not s.time_sensitive then
          level = "active"; reasons[#reasons + 1] = "time-sensitive notifications are turned off for " .. s.name .. ": downgraded to active"
        end
      end
      d.level = level

      -- collapse
      local key = n.app .. "\0" .. n.id
      local ud = delivered[user]; if not ud then ud = {}; delivered[user] = ud end
      local previous = not n.generated and ud[key]
      local replaced_queued = false
      if previous then
        d.replaces = n.id; reasons[#reasons + 1] = "replaces the delivered notification " .. n.id .. " in place"
      elseif not n.generated and queue[user] then
        for j, held in ipairs(queue[user]) do
          if held.app == n.app and held.id == n.id then
            d.replaces = n.id; replaced_queued = j; reasons[#reasons + 1] = "replaces the notification " .. n.id .. " waiting for the summary"
            break
          end
        end
      end

      local gid
      if s.grouping == "automatic" then gid = thread and (n.app .. "/" .. thread) or n.app
      elseif s.grouping == "app" then gid = n.app end
      local stored = { app = n.app, id = n.id, date = now, category = n.category, group = gid,
                       summary_arg = n.summary_arg, summary_arg_count = n.summary_arg_count, relevance = relevance,
                       expiration = n.expiration and (n.expiration == 0 and now or n.expiration) }

      -- scheduled summary
      if delivery == "summary" or (summary == nil and s.summary) or summary == true then
        local at = next_summary(now)
        local forced = delivery == "summary" or summary == true
        local passes = level == "critical" or (not forced and (level == "time-sensitive" or sender ~= nil))
        if passes then
          d.breakthrough = level == "critical" and "critical" or level == "time-sensitive" and "time-sensitive" or "communication"
          reasons[#reasons + 1] = "passes the Scheduled Summary"
        else
          d.delivery = "summary"; d.summary_at = at
          reasons[#reasons + 1] = "held for the Scheduled Summary"
          stored.summary_at = at
          local uq = queue[user]; if not uq then uq = {}; queue[user] = uq end
          if replaced_queued then uq[replaced_queued] = stored else uq[#uq + 1] = stored end
          if not uq.first or at < uq.first then uq.first = at end
          break
        end
      end

      -- focus
      if focus then
        local through, because
        if delivery == "silenced" then
          d.delivery = "silenced"
        elseif focus.silence == "locked" and not ctx.locked then
          reasons[#reasons + 1] = why .. ", but it silences only while the device is locked"
        else
          local filter = focus.filters[n.app]
          local fc = n.filter_criteria
          if filter and fc and not filter[fc] then
            if level == "critical" then through, because = "critical", "critical: breaks through everything" end
          elseif level == "critical" then through, because = "critical", "critical: breaks through everything"
          elseif level == "time-sensitive" and focus.time_sensitive then
            through, because = "time-sensitive", "time-sensitive notifications are allowed"
          else
            local name = sender and (sender.name or (contact_of(sender) or {}).name or sender.handle)
            local app_listed = focus.apps[n.app]
            if focus.mode == "silence" then
              local person_listed = sender and listed(sender, focus.people)
              if sender and c.kind == "call" and not app_listed and caller_passes(focus, sender) then
                through, because = "call", "calls from " .. name .. " are allowed"
              elseif sender and c.kind == "call" and focus.repeated_calls and repeated(calls[user], now, sender) then
                through, because = "repeated-call", name .. " called again within 3 minutes"
              elseif app_listed or person_listed then
                if allow == true then through, because = "rule", "allowed by a rule" end
              elseif sender then through, because = "person", name .. " is not silenced"
              else through, because = "app", s.name .. " is not silenced" end
            elseif sender and c.kind == "call" and caller_passes(focus, sender) then
              through, because = "call", "calls from " .. name .. " are allowed (" .. focus.calls .. ")"
            elseif sender and c.kind == "call" and focus.repeated_calls and repeated(calls[user], now, sender) then
              through, because = "repeated-call", name .. " called again within 3 minutes"
            elseif sender and c.kind == "message" and allowed(focus, sender) then
              through, because = "person", name .. " is an allowed person"
            elseif app_listed then through, because = "app", s.name .. " is an allowed app"
            elseif allow == true then through, because = "rule", "allowed by a rule" end
          end
          if through then
            d.breakthrough = through; reasons[#reasons + 1] = why .. "; " .. because
          elseif delivery == "alert" or delivery == "quiet" then
            d.breakthrough = "rule"; reasons[#reasons + 1] = why .. "; a rule forced delivery " .. delivery
          else
            d.delivery = "silenced"; d.breakthrough = nil; reasons[#reasons + 1] = why .. "; silenced"
          end
        end
      end

      -- delivery style and alert
      if s.badges and n.badge then d.badge = n.badge end
      if d.delivery ~= "silenced" then
        if delivery == "quiet" or delivery == "silenced" then d.delivery = delivery
        elseif delivery ~= "alert" and level == "passive" then d.delivery = "quiet"; reasons[#reasons + 1] = "passive: delivered quietly"
        elseif delivery ~= "alert" and quiet_only then d.delivery = "quiet"
        elseif delivery ~= "alert" and s.delivery == "quiet" and level ~= "critical" then
          d.delivery = "quiet"; reasons[#reasons + 1] = s.name .. " delivers quietly"
        else
          d.delivery = "alert"
          local critical = level == "critical"
          local sound = critical or (s.sounds and ctx.ringer == "ring")
          local audible = LEVELS[level] >= 2 or delivery == "alert"
          d.alert = { sound = sound and audible, sound_name = sound and audible and (n.sound or "default") or nil,
                      volume = critical and (n.volume or 1.0) or nil, vibrate = audible, wake_screen = audible,
                      banner = not ctx.locked and s.banners, lock_screen = ctx.locked and s.lock_screen, bypass_ringer = critical }
          reasons[#reasons + 1] = critical and "alert: critical: sounds through the ringer switch" or ("alert: " .. level .. ", with sound")
        end
      end

      -- group
      local g
      local gcount = 1
      if gid then
        local ug = groups[user]; if not ug then ug = {}; groups[user] = ug end
        g = ug[gid]; if not g then g = { members = {}, pieces = {}, order = {} }; ug[gid] = g end
        local member = previous and previous.group == gid and previous
        local digest = member and rebuild(g, member) or g
        gcount = #g.members + (member and 0 or 1)
        d.group = { id = gid, count = gcount, summary = group_line(digest.order) }
      end
      local hidden = s.previews == "never" or (s.previews == "unlocked" and ctx.locked)
      if hidden then
        local cat = n.category and CATEGORIES[n.category]
        d.placeholder = cat and cat.hidden_other and render({ one = cat.hidden_one, other = cat.hidden_other }, gcount) or "Notification"
      end
      if replaced_queued then table.remove(queue[user], replaced_queued) end
      if g then
        if previous and previous.group == gid then
          for j, m in ipairs(g.members) do if m == previous then g.members[j] = stored break end end
          local fresh = rebuild(g)
          g.pieces, g.order = fresh.pieces, fresh.order
        else
          g.members[#g.members + 1] = stored
          add_piece(g, stored)
        end
      end
      ud[key] = stored
    until true
    count = count + 1
    decisions[(i & 1023) + 1] = d -- keep a few alive, like a caller would
    if tally then
      local k = d.delivery .. " " .. tostring(d.breakthrough) .. " " .. tostring(d.group and d.group.count or "-")
      tally[k] = (tally[k] or 0) + 1
    end
  end
  return count
end

-- ANCHOR_TALLY=1: a tally of the decisions (delivery, breakthrough, group size), to compare with
-- `hush eval` on the same stream.
tally = os.getenv("ANCHOR_TALLY") and {} or nil
if tally then
  run(views)
  local keys = {}
  for k in pairs(tally) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do print(k, tally[k]) end
  os.exit(0)
end

-- The five rules alone (each in its pcall, over the same views, no decision): what the rules
-- themselves cost in plain Lua, for scale.
local function rules_only(views)
  local ctx = { now = 0, focus = "Work", locked = true, ringer = "ring", audio = "none" }
  local changed = 0
  for i = 1, #views do
    local n = views[i]
    ctx.now = n.date
    for r = 1, #RULES do
      local ok, changes = pcall(RULES[r].fn, n, ctx)
      if ok and changes then changed = changed + 1 end
    end
  end
  return changed
end

-- ANCHOR_ONLY=rules|decisions|load: one untimed pass of the five rules alone, or of the whole
-- decision, or nothing after loading, then exit: for instruction counts under callgrind
-- (scripts/bench-instructions.sh takes the difference of two of these runs, per notification).
local only = os.getenv("ANCHOR_ONLY")
if only then
  if only == "rules" then rules_only(views) elseif only == "decisions" then run(views) end
  print(string.format("notifications=%d only=%s", #views, only))
  os.exit(0)
end

local best, best_rules
for pass = 1, passes do
  collectgarbage()
  local start = os.clock()
  local count = run(views)
  local seconds = os.clock() - start
  local rate = count / seconds
  io.stderr:write(string.format("anchor pass %d: %d decisions in %.3f s CPU (%.0f decisions/s)\n", pass, count, seconds, rate))
  if not best or rate > best then best = rate end
  start = os.clock()
  rules_only(views)
  rate = #views / (os.clock() - start)
  io.stderr:write(string.format("anchor pass %d, the five rules alone: %.0f notifications/s\n", pass, rate))
  if not best_rules or rate > best_rules then best_rules = rate end
end
print(string.format("decisions=%d decisions_per_second=%.0f rules_only_per_second=%.0f", #views, best, best_rules))
