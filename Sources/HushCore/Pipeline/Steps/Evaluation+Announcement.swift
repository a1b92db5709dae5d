/// What Siri reads out on headphones or in CarPlay (docs/reference.md, "Announcement").
extension Evaluation {
    mutating func announce() {
        guard decision.delivery == .alert else {
            traceOnly("announcement", "only alerts are announced")
            return
        }
        let wanted: Bool
        switch context.audio {
        case .none:
            traceOnly("announcement", "no headphones or CarPlay: nothing is announced")
            return
        case .headphones:
            guard policy.announce.headphones else {
                traceOnly(
                    "announcement", "announcements on headphones are off (announce { headphones = true } turns them on)"
                )
                return
            }
            if settings.announce == false {
                wanted = false
            }  // never, whatever a rule says
            else if let override = subject.announce {
                wanted = override
            } else if settings.announce == true {
                wanted = true
            } else {
                wanted = envelope.sender != nil || subject.level >= .timeSensitive
            }
        case .carplay:
            guard policy.announce.carplay else {
                traceOnly(
                    "announcement", "announcements in CarPlay are off (announce { carplay = true } turns them on)")
                return
            }
            if settings.announce == false {
                wanted = false
            } else if let override = subject.announce {
                wanted = override
            } else {
                wanted = envelope.communicationKind == .message && envelope.sender != nil
            }
        }
        guard wanted else {
            traceOnly("announcement", "not announced on \(context.audio.rawValue)")
            return
        }
        let text = Announcement.text(
            envelope: envelope, appName: settings.name, previewsHidden: previewsHidden,
            directory: directory)
        decision.announcement = text
        note("announcement", "announced on \(context.audio.rawValue): \"\(text)\"")
    }
}
