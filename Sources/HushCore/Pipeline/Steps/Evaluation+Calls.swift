/// Calls are remembered whatever happens to them (repeated calls pass a focus: docs/reference.md,
/// "Focus and breakthrough").
extension Evaluation {
    /// A call is remembered once: one that replaces an earlier call (the same collapse key) is an
    /// update of that call, not a second one, so it never counts as a repeated call.
    mutating func recordCall() throws {
        guard envelope.communicationKind == .call, let caller = envelope.sender else { return }
        if try isReplacing() {
            traceOnly("calls", "updates the call \(envelope.collapseKey): not a second call")
            return
        }
        changes.append(.recordCall(CallRecord(user: envelope.user, date: now, app: envelope.app, caller: caller)))
    }
}
