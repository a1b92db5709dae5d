// libFuzzer target: bytes as the text of a Lua policy → PolicyInterpreter(sources:) (the prelude,
// the sandbox, the declaration reader and its validation) → when it loads, its rules run on two
// sample notifications through the pipeline, with a trace. Invariants: nothing traps; a refused
// policy names at least one problem, each with a file; the interpreter is usable after its rules.
import FuzzSupport
import Hush
import HushCore
import HushPolicy
import Lua

/// Tight limits, so a looping or hungry policy is stopped well inside libFuzzer's -timeout.
let limits = LuaLimits(
    memoryBytes: 16 << 20, graceMilliseconds: 1, instructionLimit: 200_000, timeLimitMilliseconds: 200)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPolicy(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { UnsafeBufferPointer(start: $0, count: size) } ?? UnsafeBufferPointer(start: nil, count: 0)
    // Policy files are read as UTF-8 (PolicyFiles refuses anything else); repair, as a lossy reader would.
    let text = String(decoding: bytes, as: UTF8.self)
    let interpreter: PolicyInterpreter
    do {
        interpreter = try PolicyInterpreter(sources: [PolicySource(name: "fuzz.lua", text: text)], limits: limits)
    } catch {
        guard !error.problems.isEmpty, error.problems.allSatisfy({ !$0.file.isEmpty }) else {
            fatalError("a refused policy must name its problems with a file: \(error.problems)")
        }
        _ = error.description
        return 0
    }
    let harness = Harness(pipeline: Pipeline(policy: interpreter.policy), rules: interpreter)
    let store = InMemoryStateStore()
    for (i, envelope) in [Fixtures.sample, Fixtures.sampleCall, Fixtures.sample].enumerated() {
        harness.evaluate(envelope, context: Fixtures.contexts[i % Fixtures.contexts.count], store: store, explain: true)
    }
    return 0
}
