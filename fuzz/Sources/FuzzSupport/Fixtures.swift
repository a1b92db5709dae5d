import Hush
import HushCore
import HushJSON
import HushPolicy
import Lua

/// What the targets share: a policy that reads every field a rule can see, contexts, samples.
package enum Fixtures {
    /// A fixed policy for the envelope target: summaries, a scheduled focus with filters, categories
    /// with formats, announcements, and rules that read every field of `n` and `ctx` and call every
    /// `hush.*` helper, so decoded values flow through the views and the pipeline.
    package static let policy = PolicySource(
        name: "fuzz-policy.lua",
        text: #"""
            timezone "Europe/Berlin"
            contact { handle = "alice@example.com", name = "Alice Doe", favorite = true, aliases = { "+1 617 555 1212" } }
            contact { handle = "+49 40 5550 0202", name = "Mum", favorite = true }
            app "*" { grouping = "automatic" }
            app "com.example.news" { name = "News", summary = true, time_sensitive = false }
            app "com.example.mail" { name = "Mail", grouping = "app", previews = "unlocked" }
            app "com.example.pager" { critical_alerts = true }
            app "com.example.trial" { authorization = "provisional" }
            app "com.example.game" { authorization = "denied" }
            app "com.example.auth" { grouping = "off", announce = true }
            category "MESSAGE" { summary_format = { one = "%u more message from %@", other = "%u more messages from %@" },
                                 hidden_preview = { one = "Message", other = "%u Messages" } }
            category "EPISODE" { summary_format = "%u more episodes of %@", hidden_preview = "%u new" }
            summary { at = { "08:00", "18:00" } }
            announce { headphones = true, carplay = true }
            focus "Work" {
              schedule = { days = "mon-fri", from = "09:00", to = "17:30" },
              people = { "alice@example.com", favorites = true, suggested = 2 },
              apps = { "com.example.mail" },
              calls = "contacts",
              filters = { ["com.example.mail"] = { "work" } },
            }
            focus "Sleep" { schedule = { days = "daily", from = "23:00", to = "07:00" }, mode = "silence", people = { "x@example.com" } }

            local fields = { "id", "app", "user", "date", "title", "subtitle", "body", "category", "thread", "level",
                             "relevance", "badge", "sound", "critical", "communication", "attachments",
                             "filter_criteria", "headers", "payload", "requested_level" }
            local function walk(v, depth)
              if type(v) == "table" and depth < 4 then
                local n = 0
                for k, x in pairs(v) do n = n + 1; if n > 50 then break end; walk(x, depth + 1) end
              end
              return tostring(v)
            end

            rule("reads everything", function(n, ctx)
              local seen = 0
              for _, f in ipairs(fields) do walk(n[f], 0); seen = seen + 1 end
              local t = ctx.time
              hush.note(tostring(ctx.now) .. " " .. tostring(ctx.focus) .. " " .. t.year .. "-" .. t.wday)
              local c = n.communication
              if c and c.sender then
                hush.contact(c.sender)
                hush.is_favorite(c.sender)
                hush.interactions { person = c.sender, days = 30 }
              end
              hush.recent { app = n.app, thread = n.thread, minutes = 10 }
              hush.suggested(3)
              if n.body:find("SEV1", 1, true) then return { level = "critical", reason = "SEV1" } end
            end)

            rule("changes from the payload", function(n, ctx)
              local p = n.payload
              local c = p.change
              if type(c) == "table" then
                return { level = c.level, delivery = c.delivery, allow = c.allow, summary = c.summary,
                         announce = c.announce, relevance = c.relevance, thread = c.thread, reason = c.reason }
              end
              if p.mentioned then return { allow = true, announce = true } end
            end)
            """#)

    /// Device states the envelope target cycles through.
    package static let contexts: [EvaluationContext] = {
        let texts = [
            #"{"now": "2026-11-24T10:30:00+01:00", "timezone": "Europe/Berlin", "locked": true}"#,
            #"{"timezone": "America/New_York", "focus": "Work", "locked": false, "ringer": "silent", "audio": "headphones"}"#,
            #"{"now": "2026-03-29T02:30:00+01:00", "focus": false, "audio": "carplay"}"#,
        ]
        return texts.map { try! EvaluationContext.decode(JSONParser.parse($0)) }
    }()

    /// A sample notification for the policy target.
    package static let sample: Envelope = try! Envelope.decode(
        JSONParser.parse(
            #"""
            {"app": "com.example.chat", "id": "m1", "date": "2026-11-24T10:30:00+01:00",
             "headers": {"apns-priority": "10", "apns-push-type": "alert"},
             "payload": {"aps": {"alert": {"title": "Alice", "body": "Lunch? SEV1", "summary-arg": "Alice"},
                                 "sound": "default", "thread-id": "alice", "category": "MESSAGE", "badge": 2,
                                 "relevance-score": 0.5, "filter-criteria": "work"},
                         "mentioned": true, "nested": {"a": [1, 2, {"b": null}]}},
             "communication": {"kind": "message", "sender": {"handle": "alice@example.com", "name": "Alice"},
                               "recipients": ["me@example.com"], "group": "Team", "conversation": "c1"},
             "attachments": [{"type": "image"}]}
            """#), fallbackID: "m1")

    package static let sampleCall: Envelope = try! Envelope.decode(
        JSONParser.parse(
            #"""
            {"app": "com.example.phone", "id": "c1", "date": "2026-11-28T23:30:00+01:00",
             "headers": {"apns-push-type": "voip"},
             "payload": {"aps": {"alert": "Mum", "interruption-level": "time-sensitive", "sound": {"critical": 1, "volume": 0.5}}},
             "communication": {"kind": "call", "sender": "+49 40 5550 0202"}}
            """#), fallbackID: "c1")
}

/// Runs the pipeline as `Session.evaluate` does, against a store the caller owns.
package struct Harness {
    package let pipeline: Pipeline
    package let rules: (any RuleRunning)?

    package init(pipeline: Pipeline, rules: (any RuleRunning)?) {
        self.pipeline = pipeline
        self.rules = rules
    }

    @discardableResult
    package func evaluate(_ envelope: Envelope, context: EvaluationContext, store: any StateStore, explain: Bool)
        -> Decision?
    {
        var envelope = envelope
        let now = context.now ?? envelope.date ?? 1_795_000_000
        envelope.date = envelope.date ?? now
        let clock = context.timezone.flatMap(ZoneClock.init(identifier:)) ?? pipeline.defaultClock
        do {
            for batch in try store.takeDueSummaries(user: envelope.user, upTo: now) {
                try store.apply(pipeline.deliveryChanges(forSummary: batch.notifications))
            }
            let outcome = try pipeline.evaluate(
                envelope, now: now, context: context, state: store, rules: rules,
                clock: clock, explain: explain)
            try store.apply(outcome.changes)
            var w = JSONWriter(capacity: 512)
            outcome.decision.write(to: &w)
            // The decision must be valid JSON: it is what the CLI prints.
            do {
                _ = try JSONParser.parse(w.bytes)
            } catch {
                fatalError("a decision is not valid JSON (\(error)): \(String(decoding: w.bytes, as: UTF8.self))")
            }
            return outcome.decision
        } catch {
            return nil
        }
    }
}
