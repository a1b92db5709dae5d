import Hush

// Prepare the policy once (an Engine is Sendable: share it); make one session per thread.
let engine = try Engine(policyFiles: ["policies/work.lua"])
let session = try engine.makeSession()  // state in memory

// One notification, as `hush eval` reads it: a message from Alice.
let json = """
    {"app": "com.example.chat", "id": "m1",
     "payload": {"aps": {"alert": {"title": "Alice", "body": "Lunch?"}, "sound": "default"}},
     "communication": {"kind": "message", "sender": {"handle": "alice@example.com"}}}
    """
let envelope = try session.envelope(fromJSON: json)
let decision = try session.evaluate(envelope, context: EvaluationContext(focus: .on("Work")))
print(decision.delivery, decision.breakthrough?.rawValue ?? "-", decision.reasons)
print(decision.jsonString)  // the line `hush eval` prints
