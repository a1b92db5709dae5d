/// What Siri would say (docs/reference.md, "Announcement").
enum Announcement {
    static func text(envelope: Envelope, appName: String, previewsHidden: Bool, directory: Directory) -> String {
        if let communication = envelope.communication, let sender = communication.sender {
            let name = directory.displayName(of: sender)
            if communication.kind == .call { return "\(name) is calling" }
            if previewsHidden { return "\(name) sent a message" }
            guard let body = envelope.body, !body.isEmpty else { return "\(name) sent a message" }
            if let group = communication.group, !group.isEmpty { return "\(name) in \(group) says \(body)" }
            return "\(name) says \(body)"
        }
        if previewsHidden { return "\(appName) notification" }
        let parts = [envelope.title, envelope.body].compactMap { $0 }.filter { !$0.isEmpty }
        return parts.isEmpty ? appName : "\(appName): " + parts.joined(separator: ", ")
    }
}
