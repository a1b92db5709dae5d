import Hush

let engine = try Engine(policyFiles: ["policies/work.lua"])  // Sendable: prepare once, share
let session = try engine.makeSession()                         // one per thread; state in memory
let line = #"{"app":"com.example.chat","id":"m1","payload":{"aps":{"alert":{"title":"Alice","body":"Lunch?"},"sound":"default"}},"communication":{"kind":"message","sender":{"handle":"alice@example.com"}}}"#
let envelope = try session.envelope(fromJSON: line)
let decision = try session.evaluate(envelope, context: EvaluationContext(focus: .on("Work")))
print(decision.delivery, decision.breakthrough?.rawValue ?? "-", decision.reasons)
print(decision.jsonString)                                     // the line `hush eval` prints
