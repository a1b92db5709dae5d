import Foundation
package import HushCore
import HushJSON
import HushPolicy
import HushState
import Logging

/// What `hush serve` does, without HTTP: decides notifications, reports and changes one user's
/// state, keeps users' own policies, and delivers each user's events at their time. Users without
/// a policy of their own share one session, in which each has their own copy of the server's
/// policy (its globals and upvalues never hold another user's notifications); a user with their
/// own policy has a session (an interpreter) of their own, made on their first request and
/// dropped least recently used beyond `maxSessions`. Not thread-safe: one owner (the server's
/// state worker) calls it.
package final class ServiceCore {
    /// Why a request was refused, in terms the HTTP layer maps to a status.
    package enum Refusal: Error, Sendable {
        /// 400: the request is wrong; `field` names what to fix.
        case badRequest(String, field: String?)
        /// 404: nothing there.
        case notFound(String)
        /// 422: a policy that does not load, with every problem as `file:line: message`.
        case invalidPolicy(String, problems: [String])
        /// 503: state could not be read or written; nothing was acknowledged.
        case unavailable(String)
    }

    /// One decision made, for the metrics.
    package struct Decided: Sendable {
        package var delivery: String
        package var seconds: Double
        package var ruleErrors: Int
        package var budgetOverruns: Int
    }

    /// The answer to `POST /v1/notifications`.
    package struct DecisionOutput: Sendable {
        /// One decision (a body with one notification), else JSON Lines.
        package var single: Bool
        /// The decision, or the JSON Lines (each line a decision or `{"line", "error"}`).
        package var body: [UInt8]
        package var decided: [Decided]
    }

    package private(set) var serverEngine: Engine
    let store: any StateStore
    let context: EvaluationContext
    let maxSessions: Int
    var logger: Logger { serverEngine.logger }

    // What every notification reads and writes below is exempt from run-time exclusivity checks
    // (a `swift_beginAccess` each, six a decision): a ServiceCore is used by one thread at a time.

    /// The session of the users without a policy of their own: one interpreter, in which each user
    /// has their own copy of the policy (made on their first notification).
    @exclusivity(unchecked) private var serverSession: Session?
    /// Users with their own policy: a session (an interpreter) each.
    @exclusivity(unchecked) private var sessions: [String: (session: Session, lastUse: Int)] = [:]
    private var uses = 0
    /// Users with their own policy, and its engine.
    @exclusivity(unchecked) private var userEngines: [String: Engine] = [:]
    /// Per user: how far events were worked out (kept in state only when the focus announced
    /// changes: working out again from an older instant announces nothing twice, since a change
    /// is announced only against the focus last announced, and a delivered summary is gone).
    @exclusivity(unchecked) var marks: [String: ScheduleMark] = [:]
    /// The users whose mark changed in the batch in progress (see `inBatch`).
    var marksTouched: Set<String> = []
    @exclusivity(unchecked) var due = DueQueue()
    /// Writing behind (`ServiceCore+WriteBehind.swift`): the SQLite store and its writer.
    var writeBehind: (store: SQLiteStateStore, writer: BackgroundWriter)?
    /// The text of each user's own policy that `userEngines` holds (a shared store: another
    /// instance may change it, see `refresh(_:)`).
    private var userPolicyTexts: [String: String?] = [:]
    /// Whether other instances share the store: then marks, due instants and users' policies are
    /// read from it each time (under the user's lock) rather than kept here.
    private var shared: Bool { store.isShared }
    private var generatedIDs = 0
    /// The share of time of users whose rules overran (one user's slow policy must not hold up others).
    @exclusivity(unchecked) package var timeShares = TimeShares()
    private let runPrefix = String(UInt32.random(in: .min ... .max), radix: 16)

    /// - Parameters:
    ///   - engine: the server's policy (`--policy`), for users without their own.
    ///   - context: the device state every decision starts from (`--context`; its `now` is
    ///     ignored: the server's clock decides).
    /// - Throws: `Refusal.unavailable` when state cannot be read.
    package init(
        engine: Engine, store: any StateStore, context: EvaluationContext, maxSessions: Int = 1024,
        retentionDays: Double = 7
    ) throws(Refusal) {
        self.serverEngine = engine
        self.retentionSeconds = retentionDays * 86400
        self.store = store
        var context = context
        context.now = nil
        self.context = context
        self.maxSessions = max(1, maxSessions)
        try guarded("read the users") {
            // A shared store (several instances) is read user by user as they are touched.
            for user in store.isShared ? [] : try store.knownUsers() {
                if let mark = try store.scheduleMark(user: user) { marks[user] = mark }
                if let text = try store.userPolicy(user: user) {
                    do {
                        userEngines[user] = try Self.userEngine(text, like: engine)
                    } catch {
                        logger.error(
                            "a user's stored policy no longer loads; the server's policy applies",
                            metadata: ["user": "\(user)", "error": "\(error)"])
                    }
                }
                // Worked out at the first tick: what fell due while the server was down.
                due.schedule(user, at: -.infinity)
            }
            var id = try store.cursor(Self.outboxIDName)
            if id == 0 {
                id = Int64.random(in: 1...Int64.max)
                try store.setCursor(Self.outboxIDName, id)
            }
            outboxID = String(UInt64(id), radix: 16)
        }
    }

    /// The state's outbox, told apart from any other (a new file, an `--ephemeral` run): part of
    /// each event's webhook idempotency key, as event ids start at 1 in each.
    package private(set) var outboxID = ""
    private static let outboxIDName = "outbox id"
    private let retentionSeconds: Double
    private var lastPrune = -Double.infinity

    /// Whether `advance(to: now)` has anything to do: the hourly pruning, or a user due by `now`
    /// (a shared store keeps who is due: always, then).
    package func hasDueWork(at now: Double) -> Bool {
        shared || now - lastPrune >= 3600 || due.hasDue(atOrBefore: now)
    }

    /// Runs `body` as one batch of the store: what it writes is committed together. Returns
    /// false when the batch could not begin or commit (nothing of it is remembered).
    package func inBatch(_ body: () -> Void) -> Bool {
        marksTouched.removeAll(keepingCapacity: true)
        do {
            try store.batch(body)
            return true
        } catch {
            logger.error("a batch of state writes could not be committed", metadata: ["error": "\(error)"])
            // The marks learnt in the batch were undone with it: read them again, and work those
            // users out again, so no event is skipped as if it had been recorded.
            for user in marksTouched where !shared {
                marks[user] = (try? store.scheduleMark(user: user)) ?? nil
                due.schedule(user, at: -.infinity)
            }
            return false
        }
    }

    // MARK: - Decisions

    /// A request's body read into lines, those the fast reader vouches for decoded already: the
    /// part of deciding that needs no state, done on the request's own thread (`prepare`), so
    /// that the state thread only decides. Under JSON Lines batches, reading the lines was a
    /// tenth of the state thread's time.
    package struct PreparedBody: Sendable {
        /// The lines kept as bytes, for those decoded on the state thread.
        fileprivate var lineBytes: [UInt8] = []
        fileprivate var documents: [(number: Int, source: BodyLine)] = []
        /// How many notifications it holds (refused lines included).
        package var count: Int { documents.count }
    }

    /// Reads `body` (one JSON object, possibly over several lines, or JSON Lines) into lines, and
    /// decodes each line the fast reader vouches for without making up an id. A line that needs
    /// one, or the parser, is left to `decide`, which makes the ids in line order as before: the
    /// same envelopes, the same ids. Needs no state: call it from any thread.
    package static func prepare(_ body: [UInt8]) throws(Refusal) -> PreparedBody {
        var prepared = PreparedBody()
        if let envelope = readOneLine(body) {
            // The usual POST, one notification on one line, read without a tree.
            prepared.documents.append((1, .read(envelope)))
            return prepared
        }
        do {
            try StreamInput.forEachItem(in: LineStream(bytes: body)) { number, item in
                switch item {
                case .line(let line):
                    if let envelope = readWithoutMakingUpAnID(line) {
                        prepared.documents.append((number, .read(envelope)))
                    } else {
                        let start = prepared.lineBytes.count
                        prepared.lineBytes.append(contentsOf: line)
                        prepared.documents.append((number, .text(start..<prepared.lineBytes.count)))
                    }
                case .parsed(let document, _):
                    prepared.documents.append((number, .parsed(document)))
                }
            }
        } catch {
            throw .badRequest("cannot read the body: \(error)", field: nil)
        }
        if prepared.documents.isEmpty {
            throw .badRequest("the body is empty: send one notification (a JSON object) or JSON Lines", field: nil)
        }
        return prepared
    }

    /// Decides the notifications in `body`, as `decide(_:jsonLines:explain:now:)` with the
    /// body `prepare`d first.
    package func decide(_ body: [UInt8], jsonLines: Bool, explain: Bool, now: Double) throws(Refusal)
        -> DecisionOutput
    {
        try decide(Self.prepare(body), jsonLines: jsonLines, explain: explain, now: now)
    }

    /// Decides the notifications of a `prepare`d body, at the server's time `now` for those
    /// without a date, in one batch: committed together before anything is answered. `jsonLines`
    /// forces a JSON Lines answer.
    package func decide(_ prepared: PreparedBody, jsonLines: Bool, explain: Bool, now: Double) throws(Refusal)
        -> DecisionOutput
    {
        let lineBytes = prepared.lineBytes
        let documents = prepared.documents
        let single = documents.count == 1 && !jsonLines
        if single, case .parsed(.failure(let error)) = documents[0].source {
            throw .badRequest(error.message, field: nil)
        }
        // One writer for the whole answer: each decision is written in place, not copied after.
        var w = JSONWriter(capacity: documents.count * 600)
        var decided: [Decided] = []
        decided.reserveCapacity(documents.count)
        var singleError: Refusal?
        var failure: (any Error)?
        do {
            try store.batch {
                for (number, source) in documents {
                    do {
                        let envelope: Envelope
                        switch source {
                        case .read(let read):
                            envelope = read
                        case .parsed(.failure(let error)):
                            throw error
                        case .parsed(.success(let json)):
                            envelope = try Envelope.decode(json, fallbackID: nextGeneratedID())
                        case .text(let range):
                            envelope = try lineBytes.withUnsafeBytes { bytes throws -> Envelope in
                                let line = UnsafeRawBufferPointer(rebasing: bytes[range])
                                // Straight from the bytes when the fast reader vouches for the line.
                                if let read = Envelope.read(line: line, fallbackID: { nextGeneratedID() }) {
                                    return read
                                }
                                return try Envelope.decode(
                                    JSONParser.parse(line), fallbackID: nextGeneratedID(),
                                    sourceByteCount: line.count)
                            }
                        }
                        let (decision, made) = try decideOne(envelope, explain: explain, now: now)
                        decided.append(made)
                        decision.write(to: &w)
                    } catch let error as JSONError {
                        ErrorLine.make(number, error.message).withUnsafeBytes { w.append($0) }
                    } catch let error as InputError {
                        if single { singleError = .badRequest(error.description, field: error.field) }
                        ErrorLine.make(number, error.description).withUnsafeBytes { w.append($0) }
                    } catch {
                        failure = error
                        ErrorLine.make(number, "\(error)").withUnsafeBytes { w.append($0) }
                    }
                    if !single { w.append(10) }
                }
            }
        } catch {
            throw .unavailable("\(error)")
        }
        if let singleError { throw singleError }
        if single, let failure { throw .unavailable("\(failure)") }
        return DecisionOutput(single: single, body: w.bytes, decided: decided)
    }

    /// A line of a request's body: its place in the batch's copy of the lines, or (line 1, one
    /// document over several lines) its value, parsed already.
    fileprivate enum BodyLine: Sendable {
        case text(Range<Int>)
        case parsed(Result<JSONValue, JSONError>)
        case read(Envelope)
    }

    /// A body that is one line (a line ending at most after it) the fast reader vouches for, read:
    /// what `StreamInput` would parse as line 1 and decode, the same envelope. Anything else, or a
    /// line without an id (made up in line order on the state thread), nil.
    private static func readOneLine(_ body: [UInt8]) -> Envelope? {
        var end = body.count
        if end > 0 && body[end - 1] == 10 { end -= 1 }
        if end > 0 && body[end - 1] == 13 { end -= 1 }
        return body.withUnsafeBytes { bytes in
            let line = UnsafeRawBufferPointer(rebasing: bytes[..<end])
            guard !line.contains(10), !line.contains(13) else { return nil }
            return readWithoutMakingUpAnID(line)
        }
    }

    /// The line's envelope when the fast reader vouches for it and it has an id; else nil.
    private static func readWithoutMakingUpAnID(_ line: UnsafeRawBufferPointer) -> Envelope? {
        var neededAnID = false
        let envelope = Envelope.read(line: line) {
            neededAnID = true
            return ""
        }
        return neededAnID ? nil : envelope
    }

    /// Decides one notification: the user's events are worked out up to its time first (so a
    /// summary or focus change before it is announced before it, as `hush simulate` orders them).
    private func decideOne(_ envelope: Envelope, explain: Bool, now: Double) throws -> (Decision, Decided) {
        var envelope = envelope
        if envelope.date == nil { envelope.date = now }
        let user = envelope.user
        let t = envelope.date!
        try refresh(user)
        let session = try session(for: user)
        if shared {
            if try t >= store.dueAt(user: user) ?? .infinity || store.scheduleMark(user: user) == nil {
                try advance(user: user, to: min(t, now + Self.maximumLead), session: session)
            }
        } else if t >= due.instant(of: user) ?? -.infinity || marks[user] == nil {
            try advance(user: user, to: min(t, now + Self.maximumLead), session: session)
        }
        let start = DispatchTime.now().uptimeNanoseconds
        session.ruleTimeAllowance = timeShares.allowance(for: user, now: Double(start) / 1e9)
        defer { session.ruleTimeAllowance = nil }
        let decision = try session.evaluate(envelope, context: context, explain: explain, wallClock: now)
        let end = DispatchTime.now().uptimeNanoseconds
        let seconds = Double(end - start) / 1e9
        if decision.delivery == .summary, let at = decision.summaryAt {
            if shared {
                if try at < store.dueAt(user: user) ?? .infinity { try store.setDueAt(user: user, at) }
            } else {
                due.schedule(user, atOrBefore: at)
            }
        }
        let overruns = decision.errors.filter(Self.isBudgetOverrun).count
        timeShares.record(
            seconds * 1000, by: user, overran: overruns > 0 || decision.errors.contains(where: Self.isMemoryOverrun),
            now: Double(end) / 1e9)
        return (
            decision,
            Decided(
                delivery: decision.delivery.rawValue, seconds: seconds, ruleErrors: decision.errors.count - overruns,
                budgetOverruns: overruns)
        )
    }

    /// A rule stopped by the sandbox's instruction, time or pattern budget (LuaSandbox's messages).
    static func isBudgetOverrun(_ error: String) -> Bool {
        error.contains("budget exceeded") || error.contains("time limit exceeded") || error.contains("step limit")
    }

    static func isMemoryOverrun(_ error: String) -> Bool { error.contains("not enough memory") }

    /// How far ahead of the server's clock a notification's date may take its user's events: a
    /// date far in the future (2999) must not leave the user's events worked out centuries ahead,
    /// never announced again. A day and a half covers a day's stream sent at once at its start.
    static let maximumLead: Double = 36 * 3600

    private func nextGeneratedID() -> String {
        generatedIDs += 1
        return "hush-\(runPrefix)-\(generatedIDs)"
    }

    // MARK: - Events over time

    /// Works out the events of every user with one due by `now` (summaries at their time, focus
    /// changes), records them, and returns how many were recorded.
    @discardableResult
    package func advance(to now: Double) throws(Refusal) -> Int {
        var recorded = 0
        // Hourly (by the server's clock), what is older than the retention is forgotten: delivered
        // notifications and calls, and the events every consumer has taken.
        if now - lastPrune >= 3600 {
            lastPrune = now
            try guarded("forget what is older than the retention") { try store.prune(before: now - retentionSeconds) }
        }
        try guarded("deliver the events that fell due") {
            // Taken first, then worked out: a user scheduled again at `now` waits for the next tick.
            var users: [String] = []
            if shared {
                users = try store.usersDue(upTo: now, limit: 500)
            } else {
                while let user = due.popDue(atOrBefore: now) { users.append(user) }
            }
            try store.batch {
                for user in users {
                    do {
                        // Another instance working on the user now: theirs, or left for the next tick.
                        guard try store.claim(user: user) else { continue }
                        try refresh(user)
                        recorded += try advance(user: user, to: now, session: nil)
                    } catch {
                        logger.error(
                            "events could not be worked out", metadata: ["user": "\(user)", "error": "\(error)"])
                        // Tried again at the next tick.
                        if !shared { due.schedule(user, at: now + 1) }
                    }
                }
            }
        }
        return recorded
    }

    /// Works out `user`'s events up to `t`, records them and schedules the user's next instant.
    @discardableResult
    private func advance(user: String, to t: Double, session: Session?) throws -> Int {
        let engine = engine(for: user)
        let schedule = UserSchedule(engine: engine, store: store, clock: clock(for: engine))
        let known = shared ? try store.scheduleMark(user: user) : marks[user]
        var mark = known ?? ScheduleMark(focus: nil, announced: false, through: t)
        // A mark far behind (a first notification dated centuries ago, a server down for months)
        // moves up: the walk covers at most the retention's span, not every day in between
        // (found by fuzz/Sources/FuzzService: one request held every other one up for seconds).
        if t - mark.through > retentionSeconds { mark.through = t - retentionSeconds }
        let (events, newMark) = try store.atomically {
            let result = try schedule.advance(user: user, from: mark, to: t, context: context)
            // Shared: every instance goes on from the mark in state, so it is kept each time.
            if shared || result.mark.focus != mark.focus || result.mark.announced != mark.announced || known == nil {
                try store.setScheduleMark(user: user, result.mark)
            }
            return result
        }
        marks[user] = shared ? nil : newMark
        marksTouched.insert(user)
        // Nothing ahead (no schedule, no summary): nothing to work out until the user's state changes.
        let next = try schedule.nextInstant(user: user, after: newMark.through)
        if shared {
            try store.setDueAt(user: user, next)
        } else {
            due.schedule(user, at: next ?? .infinity)
        }
        return events.count
    }

    // MARK: - One user's state

    /// `GET /v1/users/{user}/status`, as `hush status --json`.
    package func status(user: String, now: Double) throws(Refusal) -> [UInt8] {
        try statusReport(user: user, now: now).json()
    }

    /// The status of `user` at `now`, once what fell due by then is delivered.
    func statusReport(user: String, now: Double) throws(Refusal) -> UserStatus {
        try guarded("read the status") {
            // A user is made by their first notification, not by being looked at.
            try refresh(user)
            if try (shared ? store.scheduleMark(user: user) : marks[user]) != nil {
                try advance(user: user, to: now, session: nil)
            }
            return try session(for: user).status(user: user, at: now, context: context)
        }
    }

    /// Every user the store knows.
    func knownUsers() throws(Refusal) -> [String] {
        try guarded("read the users") { try store.knownUsers() }
    }

    /// The name `user`'s policy gives `app`.
    func appName(_ app: String, for user: String) -> String { engine(for: user).pipeline.settings(for: app).name }

    /// The server policy's clock: the time zone of `--context`, else of the policy.
    var serverClock: ZoneClock {
        // No user has the empty name (the API refuses it): this is the server policy's session.
        (try? session(for: "")).map { $0.clock(for: context) } ?? serverEngine.pipeline.defaultClock
    }

    /// `PUT /v1/users/{user}/focus` with `{"focus": name or null, "until": RFC 3339 or null,
    /// "force": bool}`, as `hush focus on`/`off`; the change is announced at once.
    package func setFocus(user: String, body: [UInt8], now: Double) throws(Refusal) -> [UInt8] {
        let json = try Self.object(body)
        let until: Double?
        switch json["until"] {
        case nil, .null?: until = nil
        case .string(let text)?:
            guard let t = RFC3339.parse(text) else {
                throw .badRequest("until: \"\(text)\" is not an RFC 3339 time", field: "until")
            }
            until = t
        default: throw .badRequest("until: must be an RFC 3339 time or null", field: "until")
        }
        var force = false
        switch json["force"] {
        case nil, .null?: break
        case .bool(let value)?: force = value
        default: throw .badRequest("force: must be true or false", field: "force")
        }
        guard let focusValue = json["focus"] else {
            throw .badRequest("focus: required (a focus name, or null for off)", field: "focus")
        }
        return try guarded("set the focus") {
            try refresh(user)
            let session = try session(for: user)
            let clock = session.clock(for: context)
            var w = JSONWriter(capacity: 256)
            switch focusValue {
            case .null:
                if let until, until <= now {
                    throw Refusal.badRequest("until: \(clock.format(until)) is not in the future", field: "until")
                }
                let ended = try session.turnFocusOff(user: user, until: until, at: now, clock: clock)
                w.raw("{\"user\":"); w.writeString(user)
                w.raw(",\"focus\":null,\"until\":")
                if let end = until ?? ended?.end { w.writeString(clock.format(end)) } else { w.writeNull() }
            case .string(let name):
                let declared: String
                do {
                    declared = try session.turnFocusOn(user: user, name: name, until: until, force: force, at: now)
                } catch let error as FocusRequestError {
                    throw Refusal.badRequest("\(error.field): \(error.message)", field: error.field)
                }
                w.raw("{\"user\":"); w.writeString(user)
                w.raw(",\"focus\":"); w.writeString(declared)
                w.raw(",\"until\":"); if let until { w.writeString(clock.format(until)) } else { w.writeNull() }
            default:
                throw Refusal.badRequest("focus: must be a focus name or null", field: "focus")
            }
            try advance(user: user, to: now, session: session)
            w.raw("}")
            return w.bytes
        }
    }

    /// `POST /v1/users/{user}/interactions`: JSON Lines of donated interactions, as `hush donate`.
    /// Valid lines are kept even when others are refused; returns how many were kept and why each
    /// refused line was.
    package func donate(user: String, body: [UInt8]) throws(Refusal) -> (
        kept: Int, errors: [(line: Int, message: String, field: String?)]
    ) {
        var batch: [Interaction] = []
        var errors: [(line: Int, message: String, field: String?)] = []
        // Bytes in memory: nothing is read, so nothing can fail to be.
        try? LineStream(bytes: body).forEachLine { line, number in
            do {
                let json = try JSONParser.parse(line)
                var interaction = try Interaction.decode(json)
                if json["user"] == nil {
                    interaction.user = user
                } else if interaction.user != user {
                    errors.append(
                        (number, "user: \"\(interaction.user)\" is not the user of the path, \"\(user)\"", "user"))
                    return
                }
                batch.append(interaction)
            } catch let error as JSONError {
                errors.append((number, error.message, nil))
            } catch let error as InputError {
                errors.append((number, error.description, error.field))
            } catch {
                errors.append((number, "\(error)", nil))
            }
        }
        try guarded("record the interactions") { try store.addInteractions(batch) }
        return (batch.count, errors)
    }

    /// `GET /v1/users/{user}/suggestions?focus=&limit=`, as `hush suggest --json`.
    package func suggestions(user: String, focus: String?, limit: Int, now: Double) throws(Refusal) -> [UInt8] {
        try guarded("read the user's policy") { try refresh(user) }
        let engine = engine(for: user)
        var settings: FocusSettings?
        if let focus {
            guard let found = engine.policy.focus(named: focus) else {
                let known = engine.policy.focuses.map(\.name)
                throw .badRequest(
                    "focus: the policy declares no focus \"\(focus)\"\(Spelling.hint(for: focus, in: known))",
                    field: "focus")
            }
            settings = found
        }
        return try guarded("read the interactions") {
            let session = try session(for: user)
            let clock = session.clock(for: context)
            return session.suggestionsJSON(
                try session.suggestions(user: user, focus: settings, limit: limit, at: now, clock: clock), clock: clock)
        }
    }

    // MARK: - Policies

    /// `PUT /v1/users/{user}/policy`: checked first, then taken at once (the user's session is
    /// made anew with it). Returns the focuses it declares.
    package func setPolicy(user: String, text: String) throws(Refusal) -> [String] {
        let engine: Engine
        do {
            engine = try Self.userEngine(text, like: serverEngine)
        } catch {
            let problems = error.problems.map(\.description)
            let count = problems.count == 1 ? "1 problem" : "\(problems.count) problems"
            throw .invalidPolicy("the policy was refused (\(count)): \(problems.first ?? "")", problems: problems)
        }
        try guarded("store the policy") { try store.setUserPolicy(user: user, text) }
        takeOwnPolicy(engine, text: text, for: user)
        rescheduleSoon(user)
        return engine.policy.focuses.map(\.name)
    }

    /// A user's own policy, under the server's limits; its problems are reported as `policy.lua:LINE`.
    private static func userEngine(_ text: String, like server: Engine) throws(PolicyLoadError) -> Engine {
        try Engine(
            sources: [PolicySource(name: "policy.lua", text: text)], limits: server.limits, logger: server.logger)
    }

    /// The user's own policy text, nil when the server's applies.
    package func policy(user: String) throws(Refusal) -> String? {
        try guarded("read the policy") { try store.userPolicy(user: user) }
    }

    /// Removes the user's own policy; false when they had none.
    package func deletePolicy(user: String) throws(Refusal) -> Bool {
        guard try policy(user: user) != nil else { return false }
        try guarded("remove the policy") { try store.setUserPolicy(user: user, nil) }
        takeOwnPolicy(nil, text: nil, for: user)
        rescheduleSoon(user)
        return true
    }

    /// The user's own policy changed (nil: removed): whatever their rules kept in memory, in their
    /// own session or in their copy in the server's, starts over.
    private func takeOwnPolicy(_ engine: Engine?, text: String?, for user: String) {
        userEngines[user] = engine
        userPolicyTexts[user] = .some(text)
        sessions[user] = nil
        serverSession?.forgetPolicyMemory(of: user)
    }

    /// Takes a new server policy (the `--policy` files changed on disk): users without their own
    /// get it at their next request.
    package func replaceServerEngine(_ engine: Engine) {
        serverEngine = engine
        serverSession = nil
        for user in marks.keys where userEngines[user] == nil { rescheduleSoon(user) }
    }

    // MARK: - The outbox

    package func events(after seq: Int64, user: String?, limit: Int) throws(Refusal) -> [StoredEvent] {
        try guarded("read the events") { try store.events(after: seq, user: user, limit: limit) }
    }

    package func lastEventSeq() throws(Refusal) -> Int64 {
        try guarded("read the events") { try store.lastEventSeq() }
    }

    /// Where the webhook `url` goes on from: the last event it acknowledged. A URL seen for the
    /// first time starts at the events recorded from now on (not at the whole history).
    package func webhookCursorName(for url: String) throws(Refusal) -> String {
        let name = "webhook \(url)"
        try guarded("start the webhook") {
            if try store.cursor("configured " + name) == 0 {
                try store.setCursor(name, try store.lastEventSeq())
                try store.setCursor("configured " + name, 1)
            }
        }
        return name
    }

    package func cursor(_ name: String) throws(Refusal) -> Int64 {
        try guarded("read a cursor") { try store.cursor(name) }
    }

    package func setCursor(_ name: String, _ seq: Int64) throws(Refusal) {
        try guarded("write a cursor") { try store.setCursor(name, seq) }
    }

    /// Calls `onNew` whenever another instance sharing the store records events (until the
    /// returned closure is called); nil when nobody else shares it.
    package func watchEvents(_ onNew: @escaping @Sendable () -> Void) -> (@Sendable () -> Void)? {
        store.watchEvents(onNew)
    }

    /// How many users have a session (an interpreter) of their own now.
    package var sessionCount: Int { sessions.count }

    // MARK: - Sessions

    private func engine(for user: String) -> Engine { userEngines[user] ?? serverEngine }

    /// The zone of the server's context, else of the user's policy (as a session's clock).
    private func clock(for engine: Engine) -> ZoneClock {
        if let name = context.timezone, let clock = ZoneClock(identifier: name) { return clock }
        return engine.pipeline.defaultClock
    }

    /// The user's session: the server's, or for a user with their own policy their own, made on
    /// first use (the least recently used is dropped beyond the bound).
    private func session(for user: String) throws -> Session {
        // (Most servers have no user with a policy of their own: no lookup then.)
        guard !userEngines.isEmpty && userEngines[user] != nil else {
            if let serverSession { return serverSession }
            let session = try serverEngine.makeSession(storing: store)
            serverSession = session
            return session
        }
        uses += 1
        if let entry = sessions[user] {
            sessions[user]!.lastUse = uses
            return entry.session
        }
        if sessions.count >= maxSessions, let idle = sessions.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
            sessions[idle] = nil
        }
        let session = try engine(for: user).makeSession(storing: store)
        sessions[user] = (session, uses)
        return session
    }

    /// The user's events are worked out again at the next tick (their policy changed).
    private func rescheduleSoon(_ user: String) {
        if shared {
            try? store.setDueAt(user: user, -Double.greatestFiniteMagnitude)
        } else {
            due.schedule(user, at: -.infinity)
        }
    }

    /// A shared store: takes the user's own policy as it is in state now (another instance may
    /// have set or removed it), before anything is done for the user.
    private func refresh(_ user: String) throws {
        guard shared else { return }
        let text = try store.userPolicy(user: user)
        if let known = userPolicyTexts[user], known == text { return }
        takeOwnPolicy(nil, text: text, for: user)
        guard let text else { return }
        do {
            userEngines[user] = try Self.userEngine(text, like: serverEngine)
        } catch {
            logger.error(
                "a user's stored policy no longer loads; the server's policy applies",
                metadata: ["user": "\(user)", "error": "\(error)"])
        }
    }

    private func guarded<T>(_ action: String, _ body: () throws -> T) throws(Refusal) -> T {
        do {
            return try body()
        } catch let refusal as Refusal {
            throw refusal
        } catch {
            logger.error("state failed", metadata: ["action": "\(action)", "error": "\(error)"])
            throw .unavailable("could not \(action): \(error)")
        }
    }

    /// The body as one JSON object.
    private static func object(_ body: [UInt8]) throws(Refusal) -> JSONValue {
        let json: JSONValue
        do {
            json = try body.withUnsafeBytes { buffer throws(JSONError) in try JSONParser.parse(buffer) }
        } catch let error as JSONError {
            throw .badRequest("the body is not JSON: \(error.message)", field: nil)
        } catch {
            throw .badRequest("the body is not JSON", field: nil)
        }
        guard case .object = json else { throw .badRequest("the body must be a JSON object", field: nil) }
        return json
    }
}

/// `{"line": N, "error": "..."}`, as `hush eval` prints a refused line.
package enum ErrorLine {
    package static func make(_ number: Int, _ message: String) -> [UInt8] {
        var w = JSONWriter(capacity: 128)
        w.raw("{\"line\":")
        w.writeInt(number)
        w.raw(",\"error\":")
        w.writeString(message)
        w.raw("}")
        return w.bytes
    }
}

/// When each user next has an event: a min-heap of (instant, user) with stale entries skipped.
struct DueQueue {
    private var heap: [(at: Double, user: String)] = []
    private var instants: [String: Double] = [:]

    func instant(of user: String) -> Double? { instants[user] }

    /// Schedules `user` at `at`, replacing what was scheduled.
    mutating func schedule(_ user: String, at: Double) {
        instants[user] = at
        if at < .infinity { push((at, user)) }
    }

    /// Schedules `user` at `at` unless something earlier is scheduled already.
    mutating func schedule(_ user: String, atOrBefore at: Double) {
        if let current = instants[user], current <= at { return }
        schedule(user, at: at)
    }

    /// Whether a user may be due at or before `t` (an entry replaced since may answer yes).
    func hasDue(atOrBefore t: Double) -> Bool { heap.first.map { $0.at <= t } ?? false }

    /// Takes a user whose instant is at or before `t`.
    mutating func popDue(atOrBefore t: Double) -> String? {
        while let top = heap.first, top.at <= t {
            pop()
            if instants[top.user] == top.at {
                instants[top.user] = nil
                return top.user
            }
        }
        return nil
    }

    private mutating func push(_ item: (at: Double, user: String)) {
        heap.append(item)
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard heap[i].at < heap[parent].at else { break }
            heap.swapAt(i, parent)
            i = parent
        }
    }

    private mutating func pop() {
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        var i = 0
        while true {
            let l = 2 * i + 1
            let r = l + 1
            var m = i
            if l < heap.count, heap[l].at < heap[m].at { m = l }
            if r < heap.count, heap[r].at < heap[m].at { m = r }
            if m == i { return }
            heap.swapAt(i, m)
            i = m
        }
    }
}
