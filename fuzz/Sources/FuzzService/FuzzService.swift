// libFuzzer target: the service's request handling below HTTP (`ServiceCore`, what each endpoint
// of `hush serve` calls on its state worker), in process, on a fresh in-memory state per input.
// The input is a sequence of operations separated by NUL bytes; each operation's first byte picks
// what it is and the rest is its body:
//   0 POST /v1/notifications (one document)     1 the same as JSON Lines, with ?explain=true
//   2 PUT /v1/users/u1/focus                     3 POST /v1/users/u1/interactions
//   4 PUT /v1/users/u2/policy (check, then take) 5 GET status and suggestions, the body as the user
//   6 the clock moves on (body: hours) and the scheduler runs (summaries, focus changes)
//   7 DELETE then GET /v1/users/u2/policy
// Invariants: nothing traps; an in-memory state is never "unavailable"; every answer is JSON
// (JSON Lines: one line per document); a refused policy names its problems.
import FuzzSupport
import Hush
import HushCore
import HushJSON
import HushPolicy
import HushState
import Lua

/// Tight limits, so a looping or hungry user policy is stopped well inside libFuzzer's -timeout.
let limits = LuaLimits(
    memoryBytes: 16 << 20, graceMilliseconds: 1, instructionLimit: 200_000, timeLimitMilliseconds: 200)
/// A small server policy (each user's session loads it anew): summaries, two focuses with
/// schedules, a rule that reads state. The `envelope` target covers the big fixed policy.
let engine: Engine = try! Engine(
    sources: [
        PolicySource(
            name: "server.lua",
            text: #"""
                timezone "Europe/Berlin"
                summary { at = { "08:00", "18:00" } }
                app "com.example.news" { name = "News", summary = true }
                contact { handle = "alice@example.com", name = "Alice Doe", favorite = true }
                focus "Work" { schedule = { days = "mon-fri", from = "09:00", to = "17:00" }, people = { "alice@example.com" } }
                focus "Sleep" { schedule = { days = "daily", from = "23:00", to = "07:00" }, mode = "silence" }
                rule("recent", function(n, ctx) hush.note(tostring(#hush.recent { app = n.app, minutes = 60 })) end)
                """#)
    ], limits: limits)
/// 2026-11-24T07:00:00+01:00, a Tuesday morning before the 08:00 summary.
let start = 1_795_500_000.0

func checkJSON(_ bytes: [UInt8], _ what: String) {
    do {
        _ = try JSONParser.parse(bytes)
    } catch {
        fatalError("\(what) is not JSON (\(error)): \(String(decoding: bytes, as: UTF8.self))")
    }
}

/// A refusal is an answer (400, 404, 422); only `unavailable` (503) must not come from memory.
func check(_ refusal: ServiceCore.Refusal, _ what: String) {
    switch refusal {
    case .unavailable(let message): fatalError("\(what): state unavailable in memory: \(message)")
    case .invalidPolicy(_, let problems):
        guard !problems.isEmpty else { fatalError("\(what): a refused policy without problems") }
    case .badRequest, .notFound: break
    }
}

func perform(_ core: ServiceCore, _ op: UInt8, _ body: [UInt8], now: inout Double) {
    switch op % 8 {
    case 0, 1:
        let lines = op % 8 == 1
        do {
            let output = try core.decide(body, jsonLines: lines, explain: lines, now: now)
            if output.single {
                checkJSON(output.body, "a decision")
            } else {
                let answered = output.body.split(separator: 10, omittingEmptySubsequences: false).dropLast()
                for line in answered { checkJSON(Array(line), "a JSON Lines answer") }
            }
        } catch { check(error, "decide") }
    case 2:
        do { checkJSON(try core.setFocus(user: "u1", body: body, now: now), "a focus answer") } catch {
            check(error, "focus")
        }
    case 3:
        do { _ = try core.donate(user: "u1", body: body) } catch { check(error, "interactions") }
    case 4:
        // As the endpoint: the body must be UTF-8 to be a policy at all.
        guard let text = String(validating: body, as: UTF8.self) else { return }
        do {
            _ = try core.setPolicy(user: "u2", text: text)
            // Taken: its rules run on the user's next notification.
            let sample = Array(#"{"app":"com.example.news","id":"p","user":"u2","payload":{"aps":{"alert":"x"}}}"#.utf8)
            checkJSON(try core.decide(sample, jsonLines: false, explain: true, now: now).body, "a decision")
        } catch { check(error, "policy") }
    case 5:
        let user = String(decoding: body.prefix(64), as: UTF8.self)
        guard !user.isEmpty else { return }
        do { checkJSON(try core.status(user: user, now: now), "a status") } catch { check(error, "status") }
        do {
            checkJSON(try core.suggestions(user: "u1", focus: user, limit: 3, now: now), "suggestions")
        } catch { check(error, "suggestions") }
    case 6:
        let hours = Double(body.first ?? 1) / 8
        now += hours * 3600
        do { _ = try core.advance(to: now) } catch { check(error, "advance") }
        do {
            for event in try core.events(after: 0, user: nil, limit: 50) {
                checkJSON(Array(event.json.utf8), "an event")
            }
        } catch { check(error, "events") }
    default:
        do {
            _ = try core.deletePolicy(user: "u2")
            _ = try core.policy(user: "u2")
        } catch { check(error, "delete the policy") }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzService(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let core: ServiceCore
    do {
        core = try ServiceCore(
            engine: engine, store: InMemoryStateStore(), context: Fixtures.contexts[0], maxSessions: 4)
    } catch {
        fatalError("a service over memory must start: \(error)")
    }
    var now = start
    for operation in bytes.split(separator: 0, maxSplits: 31, omittingEmptySubsequences: true) {
        let body = Array(operation.dropFirst())
        // Each request in its own batch, as the state worker runs it.
        let committed = core.inBatch { perform(core, operation.first!, body, now: &now) }
        guard committed else { fatalError("a batch in memory must commit") }
    }
    return 0
}
