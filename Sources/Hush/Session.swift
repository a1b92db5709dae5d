import Foundation
public import HushCore
import HushJSON
import HushPolicy
import HushState
import Logging
import Lua

/// Evaluates notifications one after another against a prepared policy and a state store.
/// Confined to one thread at a time: make one per thread from a shared ``Engine``.
public final class Session {
    package let engine: Engine
    package let store: any StateStore
    let interpreter: PolicyInterpreter
    /// The pipeline this session evaluates with: built from its interpreter's own (equal) policy,
    /// so that sessions on other threads never write the reference counts this one touches.
    private let pipeline: Pipeline
    private var clocks: [String: ZoneClock] = [:]
    /// The clock asked for last: a stream's contexts nearly always name one zone.
    private var lastClock: (name: String, clock: ZoneClock)?
    private var generatedIDs = 0
    private let runPrefix: String

    init(engine: Engine, store: any StateStore) throws(PolicyLoadError) {
        self.engine = engine
        self.store = store
        self.interpreter = try PolicyInterpreter(sources: engine.sources, limits: engine.limits)
        self.pipeline = interpreter.pipelineCopy(of: engine.pipeline) ?? engine.pipeline
        self.runPrefix = String(UInt32.random(in: .min ... .max), radix: 16)
    }

    /// The clock of the context's zone, else the policy's, else the machine's.
    package func clock(for context: EvaluationContext) -> ZoneClock {
        guard let name = context.timezone else { return pipeline.defaultClock }
        if let lastClock, lastClock.name == name { return lastClock.clock }
        let clock: ZoneClock
        if let known = clocks[name] {
            clock = known
        } else {
            clock = ZoneClock(identifier: name) ?? pipeline.defaultClock
            clocks[name] = clock
        }
        lastClock = (name, clock)
        return clock
    }

    /// Decides one notification and records what state should remember. Summaries that fell due
    /// before it are delivered first, so their notifications are in their groups.
    /// - Parameters:
    ///   - envelope: the notification, from ``envelope(fromJSON:line:)-(String,_)``.
    ///   - context: the device's state; its `now` (else the envelope's date, else `wallClock`,
    ///     else the clock) is the time of the decision.
    ///   - explain: adds a `Decision.trace`: every step and rule, with `file:line`.
    ///   - wallClock: the time (UNIX seconds) when neither the context nor the envelope has one;
    ///     nil: the clock.
    /// - Throws: `HushError` `state_failed` when the store cannot record it; the decision is
    ///   then not made.
    @discardableResult
    public func evaluate(
        _ envelope: consuming Envelope, context: EvaluationContext = EvaluationContext(),
        explain: Bool = false, wallClock: Double? = nil
    ) throws(HushError) -> Decision {
        if envelope.date == nil { envelope.date = context.now ?? wallClock ?? Clock.now() }
        let now = context.now ?? envelope.date!
        let user = envelope.user
        let clock = clock(for: context)
        do {
            // Nothing is due for most notifications: asked before the schedule is made for it.
            if try store.hasDueSummaries(user: user, upTo: now) {
                _ = try schedule(clock: clock).deliverDueSummaries(user: user, upTo: now, locked: context.locked)
            }
            var outcome = try pipeline.evaluate(
                consume envelope, now: now, context: context, state: store, rules: interpreter,
                clock: clock, explain: explain)
            try store.apply(outcome.changes)
            if !outcome.decision.errors.isEmpty {
                engine.logger.debug(
                    "rule error",
                    metadata: [
                        "user": "\(user)", "id": "\(outcome.decision.id)",
                        "errors": "\(outcome.decision.errors)",
                    ])
            }
            // Moved out (swapped for a blank), not copied: the outcome is not used again.
            var decision = Decision(
                id: "", app: "", user: "", delivery: .alert, level: .active, requestedLevel: .active)
            swap(&decision, &outcome.decision)
            return decision
        } catch {
            let failure = HushError(state: error)
            engine.logger.error("state store failed", metadata: ["user": "\(user)", "error": "\(failure.message)"])
            throw failure
        }
    }

    /// For a process about to exit (`hush eval` at the end of its input): the policy's Lua states,
    /// the store when it is in memory only, and a state file's users cached in memory are never
    /// freed, as the exit gives their memory back at once, where freeing it object by object costs
    /// a few percent of a long run. A store with a file or a server is still closed (checkpointed)
    /// when the last reference to it goes.
    package func keepInMemoryUntilExit() {
        _ = Unmanaged.passRetained(interpreter)
        if let memory = store as? InMemoryStateStore { _ = Unmanaged.passRetained(memory) }
        if let file = store as? SQLiteStateStore { file.keepCacheUntilExit() }
    }

    /// The milliseconds the next evaluation's rules may take (a service's per-user share of its
    /// time; see `PolicyInterpreter.timeAllowance`). nil: the limits alone.
    package var ruleTimeAllowance: Double? {
        get { interpreter.timeAllowance }
        set { interpreter.timeAllowance = newValue }
    }

    /// Forgets what the policy's rules kept for `user` (their copy of the policy, made again at
    /// their next notification).
    package func forgetPolicyMemory(of user: String) { interpreter.forgetInstance(of: user) }

    /// Delivers every summary of `user` due at or before `t` (UNIX seconds) and returns them as
    /// shown (previews hidden by an app's settings leave out title and body when `locked`).
    /// ``evaluate(_:context:explain:wallClock:)`` does this itself before each decision; call it
    /// on a timer to deliver a summary at its time.
    public func deliverDueSummaries(user: String, at t: Double, locked: Bool = true) throws(HushError)
        -> [SummaryDelivery]
    {
        do {
            return try schedule(clock: pipeline.defaultClock).deliverDueSummaries(user: user, upTo: t, locked: locked)
        } catch {
            throw HushError(state: error)
        }
    }

    /// The user's events over time in `clock`'s zone (see `UserSchedule`).
    func schedule(clock: ZoneClock) -> UserSchedule {
        UserSchedule(engine: engine, store: store, clock: clock)
    }

    /// Decodes one notification: a JSON object, as one line of `hush eval` input (docs/reference.md,
    /// "Input: the notification envelope"). A notification with neither an `id` nor an `apns-id`
    /// is given one unique to this session.
    /// - Parameters:
    ///   - text: one JSON object.
    ///   - line: the input line it came from, for the error.
    /// - Throws: `HushError` `invalid_input` naming the field.
    public func envelope(fromJSON text: String, line: Int? = nil) throws(HushError) -> Envelope {
        var text = text
        return try text.withUTF8 { bytes in
            Result { () throws(HushError) in try envelope(fromJSON: UnsafeRawBufferPointer(bytes), line: line) }
        }.get()
    }

    /// Decodes one notification from the bytes of one JSON object (UTF-8, no line ending), as
    /// ``envelope(fromJSON:line:)-(String,_)`` does, without copying them into a `String` first.
    /// - Parameters:
    ///   - bytes: one JSON object.
    ///   - line: the input line it came from, for the error.
    /// - Throws: `HushError` `invalid_input` naming the field.
    public func envelope(fromJSON bytes: UnsafeRawBufferPointer, line: Int? = nil) throws(HushError) -> Envelope {
        do { return try envelope(fromLine: bytes, number: line ?? 1) } catch {
            throw HushError(error.reason, line: line)
        }
    }

    /// Decodes one line of JSON Lines into a notification: the way from input bytes to an
    /// `Envelope` (`hush eval`, `simulate` and `bench` read with it). `line` is one JSON object
    /// without its line ending; `number`, its 1-based line number, goes into the error. A
    /// notification with neither an `id` nor an `apns-id` is given one unique to this session.
    package func envelope(fromLine line: UnsafeRawBufferPointer, number: Int) throws(LineError) -> Envelope {
        // Straight from the bytes when the fast reader can vouch for the line; else parsed and
        // decoded, which also words the error.
        if let envelope = Envelope.read(line: line, fallbackID: { nextGeneratedID() }) { return envelope }
        let json: JSONValue
        do {
            json = try JSONParser.parse(line)
        } catch {
            throw LineError(line: number, error)
        }
        return try envelope(from: json, number: number, sourceByteCount: line.count)
    }

    /// Decodes a line already parsed (or one document spread over several lines) from
    /// `sourceByteCount` bytes of text, when known.
    func envelope(from json: JSONValue, number: Int, sourceByteCount: Int? = nil) throws(LineError) -> Envelope {
        do {
            return try Envelope.decode(json, fallbackID: nextGeneratedID(), sourceByteCount: sourceByteCount)
        } catch {
            throw LineError(line: number, reason: error)
        }
    }

    /// `hush-<run>-<n>`: the run's random prefix keeps ids from two runs on one state apart.
    private func nextGeneratedID() -> String {
        generatedIDs += 1
        return "hush-\(runPrefix)-\(generatedIDs)"
    }
}

/// An input line that was refused: its number, and why (`reason.field` names the field to blame,
/// when one is).
package struct LineError: Error, Sendable, Hashable, CustomStringConvertible {
    package var line: Int
    package var reason: InputError

    package init(line: Int, reason: InputError) {
        self.line = line
        self.reason = reason
    }

    /// A line that is not JSON.
    init(line: Int, _ error: JSONError) {
        self.init(line: line, reason: InputError(field: nil, error.message))
    }

    package var description: String { "line \(line): \(reason)" }
}

/// The wall clock, in UNIX seconds.
enum Clock {
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
