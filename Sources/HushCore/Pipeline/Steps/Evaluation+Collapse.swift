/// An update of an earlier notification replaces it (docs/reference.md, "Collapse").
extension Evaluation {
    mutating func collapse() throws {
        guard !envelope.idIsGenerated else {
            traceOnly("collapse", "no request id: nothing to replace")
            return
        }
        let key = envelope.collapseKey
        guard try isReplacing() else {
            traceOnly("collapse", "no earlier notification \(key) from \(settings.name)")
            return
        }
        decision.replaces = key
        if case .some(.some) = deliveredEntry {
            note("collapse", "replaces the delivered notification \(key) in place")
        } else {
            replacedQueued = true
            note("collapse", "replaces the notification \(key) waiting for the summary")
        }
    }
}
