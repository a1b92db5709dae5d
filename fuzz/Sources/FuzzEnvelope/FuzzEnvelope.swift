import FuzzSupport
import Hush
import HushCore
// libFuzzer target: bytes as `hush eval` INPUT → StreamInput (LineStream) → JSONParser.parse →
// Envelope.decode (also EvaluationContext.decode and Interaction.decode, the other JSON inputs) →
// the pipeline with a fixed policy (its rules read every field) and a fresh in-memory store per
// input. Invariants: nothing traps; a parsed value written back parses to the same value; every
// decision is valid JSON; the fast reader (Envelope.read) gives a line's envelope only when parsing
// and decoding the line gives the same one, having taken a generated id exactly when they do.
import HushJSON
import HushPolicy
import Lua

nonisolated(unsafe) let interpreter: PolicyInterpreter = try! PolicyInterpreter(
    sources: [Fixtures.policy],
    limits: LuaLimits(memoryBytes: 32 << 20, instructionLimit: 1_000_000, timeLimitMilliseconds: 500))
nonisolated(unsafe) let harness = Harness(pipeline: Pipeline(policy: interpreter.policy), rules: interpreter)
nonisolated(unsafe) var generated = 0

func checkRoundTrip(_ value: JSONValue) {
    var w = JSONWriter()
    w.write(value)
    let again: JSONValue
    do {
        again = try JSONParser.parse(w.bytes)
    } catch {
        fatalError("written JSON does not parse (\(error)): \(String(decoding: w.bytes, as: UTF8.self))")
    }
    guard again == value else {
        fatalError("JSON round trip changed the value: \(String(decoding: w.bytes, as: UTF8.self))")
    }
}

func evaluateOne(_ json: JSONValue, store: InMemoryStateStore, context: EvaluationContext) {
    checkRoundTrip(json)
    _ = try? EvaluationContext.decode(json)
    _ = try? Interaction.decode(json)
    generated += 1
    guard let envelope = try? Envelope.decode(json, fallbackID: "hush-fuzz-\(generated)") else { return }
    harness.evaluate(envelope, context: context, store: store, explain: generated % 2 == 0)
}

/// The fast reader agrees with parse + decode, or gives up.
func checkFastReader(_ line: UnsafeRawBufferPointer) {
    var fastTook = 0
    var slowTook = 0
    guard
        let fast = Envelope.read(
            line: line,
            fallbackID: {
                fastTook += 1; return "hush-fuzz-id"
            })
    else { return }
    let slow: Envelope
    do {
        slow = try Envelope.decode(
            JSONParser.parse(line),
            fallbackID: {
                slowTook += 1; return "hush-fuzz-id"
            }(), sourceByteCount: line.count)
    } catch {
        fatalError("the fast reader read a line that parse + decode refuse (\(error)): \(Array(line))")
    }
    // (Every stored property takes part in ==, idIsGenerated and hasAlertMember included.)
    guard fast == slow, fastTook == slowTook else {
        fatalError("the fast reader read a line otherwise than parse + decode: \(Array(line))")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEnvelope(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let store = InMemoryStateStore()
    let context = Fixtures.contexts[bytes.count % Fixtures.contexts.count]
    generated = 0
    // Read as `hush eval` reads its INPUT: JSON Lines, or one object over several lines.
    try? StreamInput.forEachItem(in: LineStream(bytes: bytes)) { _, item in
        switch item {
        case .line(let line):
            checkFastReader(line)
            guard case .success(let json) = StreamInput.parse(line) else { return }
            evaluateOne(json, store: store, context: context)
        case .parsed(.success(let json), _):
            evaluateOne(json, store: store, context: context)
        case .parsed(.failure, _):
            return
        }
    }
    return 0
}
