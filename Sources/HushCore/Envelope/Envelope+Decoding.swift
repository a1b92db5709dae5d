package import HushJSON

extension Envelope {
    /// Largest payload APNs accepts, in bytes.
    package static let maximumPayloadBytes = 4096
    package static let maximumVoIPPayloadBytes = 5120
    package static let maximumCollapseIDBytes = 64

    /// Written as compact JSON, a value takes at most this many times the bytes of the text it was
    /// parsed from: strings, keys and literals never grow (escapes are kept or shortened, whitespace
    /// and repeated keys go), and a number grows at most 4x (`1e15` is written `1000000000000000`).
    package static let compactGrowthBound = 4

    /// Decodes and validates one envelope. `fallbackID` names a notification that has neither an
    /// `id` nor an `apns-collapse-id`. `sourceByteCount`, the length of the text `json` was parsed
    /// from when known, spares measuring the payload when that text is too short for it to be over
    /// APNs' limit.
    package static func decode(
        _ json: JSONValue, fallbackID: @autoclosure () -> String, sourceByteCount: Int? = nil
    ) throws(InputError) -> Envelope {
        guard case .object(let root) = json else {
            throw InputError(field: nil, "a notification must be a JSON object, got \(json.typeName)")
        }
        // The top-level members in one pass, as for payload.aps (see DecodedAPS.decode).
        var appMember, payloadMember, headersMember, idMember, dateMember, userMember, communicationMember,
            attachmentsMember, withdrawMember: JSONValue?
        root._pairs.withUnsafeBufferPointer { members in
            for i in members.indices {
                let key = members[i].key
                switch key.utf8.count {
                case 2:
                    if key == "id" { idMember = members[i].value }
                case 3:
                    if key == "app" { appMember = members[i].value }
                case 4:
                    if key == "date" {
                        dateMember = members[i].value
                    } else if key == "user" {
                        userMember = members[i].value
                    }
                case 7:
                    if key == "payload" {
                        payloadMember = members[i].value
                    } else if key == "headers" {
                        headersMember = members[i].value
                    }
                case 8:
                    if key == "withdraw" { withdrawMember = members[i].value }
                case 11:
                    if key == "attachments" { attachmentsMember = members[i].value }
                case 13:
                    if key == "communication" { communicationMember = members[i].value }
                default:
                    break
                }
            }
        }
        guard let appValue = appMember else {
            throw InputError(field: "app", "is required (the sending app's bundle id)")
        }
        guard case .string(let app) = appValue, !app.isEmpty else {
            throw InputError(field: "app", "must be a non-empty string, got \(appValue.quotedForError)")
        }
        try Self.checkLength(app, field: "app")
        var withdraw = false
        if let value = withdrawMember, !value.isNull {
            guard case .bool(let flag) = value else {
                throw InputError(field: "withdraw", "must be true or false, got \(value.quotedForError)")
            }
            withdraw = flag
        }
        // A withdraw line names what it removes; it has nothing to show, so no payload is needed.
        let payloadValue = payloadMember ?? (withdraw ? .object(JSONObject()) : nil)
        guard let payloadValue else { throw InputError(field: "payload", "is required (the APNs payload)") }
        guard case .object(let payload) = payloadValue else {
            throw InputError(field: "payload", "must be an object, got \(payloadValue.typeName)")
        }

        var headers = JSONObject()
        if let value = headersMember {
            guard case .object(let object) = value else {
                throw InputError(field: "headers", "must be an object, got \(value.typeName)")
            }
            headers = object
        }
        let pushType = try optionalString(headers[plainKey: "apns-push-type"], field: "headers.apns-push-type")
        let collapseID = try optionalString(headers[plainKey: "apns-collapse-id"], field: "headers.apns-collapse-id")
        if let collapseID, collapseID.utf8.count > maximumCollapseIDBytes {
            throw InputError(
                field: "headers.apns-collapse-id",
                "is \(collapseID.utf8.count) bytes; APNs allows at most \(maximumCollapseIDBytes)")
        }
        let priority = try optionalInteger(
            headers[plainKey: "apns-priority"], field: "headers.apns-priority", allowString: true)
        if let priority, ![10, 5, 1].contains(priority) {
            throw InputError(field: "headers.apns-priority", "must be 10, 5 or 1, got \(priority)")
        }
        let expiration = try optionalInteger(
            headers[plainKey: "apns-expiration"], field: "headers.apns-expiration", allowString: true)

        // The size APNs sees: the payload written as compact JSON (counted, not written, and only
        // when the line it came from could hold a payload over the limit).
        let limit = pushType == "voip" ? maximumVoIPPayloadBytes : maximumPayloadBytes
        if let sourceByteCount, sourceByteCount <= limit / compactGrowthBound {
            // Within the limit whatever the payload holds.
        } else if case let payloadBytes = JSONWriter.byteCount(of: payloadValue), payloadBytes > limit {
            throw InputError(
                field: "payload",
                "is \(payloadBytes) bytes; APNs allows at most \(limit) for \(pushType == "voip" ? "VoIP" : "this") push type"
            )
        }

        let id: String
        var idIsGenerated = false
        if let value = idMember {
            guard case .string(let s) = value, !s.isEmpty else {
                throw InputError(field: "id", "must be a non-empty string, got \(value.quotedForError)")
            }
            try Self.checkLength(s, field: "id")
            id = s
        } else if let collapseID {
            id = collapseID
        } else if withdraw {
            throw InputError(field: "id", "is required to withdraw a notification (or headers.apns-collapse-id)")
        } else {
            id = fallbackID()
            idIsGenerated = true
        }

        var date: Double?
        if let value = dateMember {
            guard case .string(let s) = value, let parsed = RFC3339.parse(s) else {
                throw InputError(
                    field: "date", "must be an RFC 3339 time such as 2026-11-22T09:30:00Z, got \(value.quotedForError)")
            }
            date = parsed
        }
        var user = "default"
        if let value = userMember {
            guard case .string(let s) = value, !s.isEmpty else {
                throw InputError(field: "user", "must be a non-empty string, got \(value.quotedForError)")
            }
            try Self.checkLength(s, field: "user")
            user = s
        }

        // Everything is decoded into locals and the envelope is made once at the end: building it
        // first and filling it in cost a copy of the whole envelope on return.
        var aps = DecodedAPS()
        if let apsValue = payload[plainKey: "aps"] {
            guard case .object(let apsObject) = apsValue else {
                throw InputError(field: "payload.aps", "must be an object, got \(apsValue.typeName)")
            }
            try aps.decode(apsObject)
        }
        var communication: Communication?
        if let value = communicationMember {
            communication = try decodeCommunication(value)
        }
        var attachments: [String] = []
        if let value = attachmentsMember {
            guard case .array(let items) = value else {
                throw InputError(field: "attachments", "must be an array, got \(value.typeName)")
            }
            for (i, item) in items.enumerated() {
                // The field name is built only for an error.
                var type: JSONValue?
                if case .object(let object) = item { type = object[plainKey: "type"] }
                guard let type else { throw InputError(field: "attachments[\(i)].type", "is required") }
                guard case .string(let s) = type, ["image", "audio", "video", "file"].contains(s) else {
                    throw InputError(
                        field: "attachments[\(i)].type",
                        "must be image, audio, video or file, got \(type.quotedForError)")
                }
                attachments.append(s)
            }
        }
        return Envelope(
            app: app, id: id, idIsGenerated: idIsGenerated, collapseKey: collapseID ?? id, withdraw: withdraw,
            date: date, user: user, headersSource: DeferredJSONObject(headers),
            payloadSource: DeferredJSONObject(payload), hasAlertMember: aps.hasAlertMember,
            pushType: pushType, priority: priority, expiration: expiration.map(Double.init),
            title: aps.title, subtitle: aps.subtitle, body: aps.body, summaryArgument: aps.summaryArgument,
            summaryArgumentCount: aps.summaryArgumentCount, badge: aps.badge, sound: aps.sound, threadID: aps.threadID,
            category: aps.category, contentAvailable: aps.contentAvailable, mutableContent: aps.mutableContent,
            targetContentID: aps.targetContentID, interruptionLevel: aps.interruptionLevel, relevance: aps.relevance,
            filterCriteria: aps.filterCriteria, communication: communication, attachments: attachments)
    }

    /// The envelope fields that come from `payload.aps` (read from a tree here, from the text by
    /// `Envelope.read`).
    struct DecodedAPS {
        var title: String?
        var subtitle: String?
        var body: String?
        var summaryArgument: String?
        var summaryArgumentCount = 1
        var badge: Int?
        var sound: Sound?
        var threadID: String?
        var category: String?
        var contentAvailable = false
        var mutableContent = false
        var targetContentID: String?
        var interruptionLevel: InterruptionLevel?
        var relevance: Double?
        var filterCriteria: String?
        var hasAlertMember = false

        mutating func decode(_ aps: JSONObject) throws(InputError) {
            // One pass over the members instead of a lookup per field; the checks below then run in
            // their usual order. Keys of another UTF-8 length are skipped without a comparison, as in
            // `JSONObject.subscript(plainKey:)`, which explains why that finds the same members.
            var alertMember, badgeMember, soundMember, threadIDMember, categoryMember, contentAvailableMember,
                mutableContentMember, targetContentIDMember, interruptionLevelMember, relevanceMember,
                filterCriteriaMember: JSONValue?
            aps._pairs.withUnsafeBufferPointer { members in
                for i in members.indices {
                    let key = members[i].key
                    switch key.utf8.count {
                    case 5:
                        if key == "alert" {
                            alertMember = members[i].value
                        } else if key == "sound" {
                            soundMember = members[i].value
                        } else if key == "badge" {
                            badgeMember = members[i].value
                        }
                    case 8:
                        if key == "category" { categoryMember = members[i].value }
                    case 9:
                        if key == "thread-id" { threadIDMember = members[i].value }
                    case 15:
                        if key == "mutable-content" {
                            mutableContentMember = members[i].value
                        } else if key == "relevance-score" {
                            relevanceMember = members[i].value
                        } else if key == "filter-criteria" {
                            filterCriteriaMember = members[i].value
                        }
                    case 17:
                        if key == "content-available" {
                            contentAvailableMember = members[i].value
                        } else if key == "target-content-id" {
                            targetContentIDMember = members[i].value
                        }
                    case 18:
                        if key == "interruption-level" { interruptionLevelMember = members[i].value }
                    default:
                        break
                    }
                }
            }
            if let alert = alertMember {
                hasAlertMember = true
                switch alert {
                case .string(let s): body = s
                case .object(let object):
                    title = try Envelope.optionalString(object[plainKey: "title"], field: "payload.aps.alert.title")
                    subtitle = try Envelope.optionalString(
                        object[plainKey: "subtitle"], field: "payload.aps.alert.subtitle")
                    body = try Envelope.optionalString(object[plainKey: "body"], field: "payload.aps.alert.body")
                    summaryArgument = try Envelope.optionalString(
                        object[plainKey: "summary-arg"], field: "payload.aps.alert.summary-arg")
                    if let value = object[plainKey: "summary-arg-count"] {
                        guard let count = value.intValue, count > 0 else {
                            throw InputError(
                                field: "payload.aps.alert.summary-arg-count",
                                "must be a positive integer, got \(value.quotedForError)")
                        }
                        summaryArgumentCount = count
                    }
                case .null: break
                default:
                    throw InputError(field: "payload.aps.alert", "must be a string or an object, got \(alert.typeName)")
                }
            }
            if let value = badgeMember {
                guard let b = value.intValue, b >= 0 else {
                    throw InputError(
                        field: "payload.aps.badge", "must be a non-negative integer, got \(value.quotedForError)")
                }
                badge = b
            }
            if let value = soundMember {
                switch value {
                case .string(let name): sound = Sound(name: name, critical: false, volume: nil)
                case .object(let object):
                    var critical = false
                    if let c = object[plainKey: "critical"] {
                        guard let flag = c.intValue ?? c.boolValue.map({ $0 ? 1 : 0 }), flag == 0 || flag == 1 else {
                            throw InputError(
                                field: "payload.aps.sound.critical", "must be 0 or 1, got \(c.quotedForError)")
                        }
                        critical = flag == 1
                    }
                    let name = try Envelope.optionalString(object[plainKey: "name"], field: "payload.aps.sound.name")
                    var volume: Double?
                    if let v = object[plainKey: "volume"] {
                        guard let d = v.doubleValue, d >= 0, d <= 1 else {
                            throw InputError(
                                field: "payload.aps.sound.volume",
                                "must be a number from 0.0 to 1.0, got \(v.quotedForError)")
                        }
                        volume = d
                    }
                    sound = Sound(name: name, critical: critical, volume: volume)
                default:
                    throw InputError(field: "payload.aps.sound", "must be a string or an object, got \(value.typeName)")
                }
            }
            threadID = try Envelope.optionalString(threadIDMember, field: "payload.aps.thread-id")
            category = try Envelope.optionalString(categoryMember, field: "payload.aps.category")
            contentAvailable = try Envelope.flag(contentAvailableMember, field: "payload.aps.content-available")
            mutableContent = try Envelope.flag(mutableContentMember, field: "payload.aps.mutable-content")
            targetContentID = try Envelope.optionalString(targetContentIDMember, field: "payload.aps.target-content-id")
            if let value = interruptionLevelMember {
                guard case .string(let s) = value, let level = InterruptionLevel(rawValue: s) else {
                    throw InputError(
                        field: "payload.aps.interruption-level",
                        "unknown interruption level \(value.quotedForError) (expected passive, active, time-sensitive or critical)"
                    )
                }
                interruptionLevel = level
            }
            if let value = relevanceMember {
                guard let d = value.doubleValue, d >= 0, d <= 1 else {
                    throw InputError(
                        field: "payload.aps.relevance-score",
                        "must be a number from 0 to 1, got \(value.quotedForError)")
                }
                relevance = d
            }
            filterCriteria = try Envelope.optionalString(filterCriteriaMember, field: "payload.aps.filter-criteria")
        }
    }

    private static func decodeCommunication(_ value: JSONValue) throws(InputError) -> Communication {
        guard case .object(let object) = value else {
            throw InputError(field: "communication", "must be an object, got \(value.typeName)")
        }
        let kind: Communication.Kind
        if let k = object[plainKey: "kind"] {
            guard case .string(let s) = k, let parsed = Communication.Kind(rawValue: s) else {
                throw InputError(
                    field: "communication.kind", "must be \"message\" or \"call\", got \(k.quotedForError)")
            }
            kind = parsed
        } else {
            kind = .message
        }
        // Decoded into locals and put together at the end (filling in a Communication made up
        // front cost a copy of it on return).
        var sender: Person?
        if let value = object[plainKey: "sender"], !value.isNull {
            sender = try decodePerson(value, at: .field("communication.sender"))
        }
        var recipients: [Person] = []
        if let value = object[plainKey: "recipients"] {
            guard case .array(let items) = value else {
                throw InputError(field: "communication.recipients", "must be an array of people, got \(value.typeName)")
            }
            recipients.reserveCapacity(items.count)
            for (i, item) in items.enumerated() {
                recipients.append(try decodePerson(item, at: .recipient(i)))
            }
        }
        let group = try optionalString(object[plainKey: "group"], field: "communication.group")
        let conversation = try optionalString(object[plainKey: "conversation"], field: "communication.conversation")
        let service = try optionalString(object[plainKey: "service"], field: "communication.service")
        return Communication(
            kind: kind, sender: sender, recipients: recipients, group: group,
            conversation: conversation, service: service)
    }

    /// Where a person sits in the input, for error messages. The dotted path is built only when an
    /// error needs it, not for every person decoded.
    enum PersonPath {
        case field(String)
        /// `communication.recipients[i]`
        case recipient(Int)

        var text: String {
            switch self {
            case .field(let field): field
            case .recipient(let i): "communication.recipients[\(i)]"
            }
        }
    }

    /// A Person object, or a bare handle string.
    package static func decodePerson(_ value: JSONValue, field: String) throws(InputError) -> Person {
        try decodePerson(value, at: .field(field))
    }

    static func decodePerson(_ value: JSONValue, at path: PersonPath) throws(InputError) -> Person {
        if case .string(let handle) = value { return Person(handle: handle) }
        guard case .object(let object) = value else {
            throw InputError(
                field: path.text, "must be a person object ({\"handle\": …, \"name\": …}), got \(value.typeName)")
        }
        let handle = try optionalString(object[plainKey: "handle"], field: path.text + ".handle")
        let name = try optionalString(object[plainKey: "name"], field: path.text + ".name")
        let contact = try optionalString(object[plainKey: "contact"], field: path.text + ".contact")
        var aliases: [String] = []
        if let value = object[plainKey: "aliases"] {
            guard case .array(let items) = value else {
                throw InputError(field: path.text + ".aliases", "must be an array of handles, got \(value.typeName)")
            }
            for (i, item) in items.enumerated() {
                guard case .string(let s) = item else {
                    throw InputError(field: path.text + ".aliases[\(i)]", "must be a string, got \(item.typeName)")
                }
                aliases.append(s)
            }
        }
        if handle == nil && name == nil && contact == nil && aliases.isEmpty {
            throw InputError(field: path.text, "needs at least a handle or a name")
        }
        return Person(handle: handle, name: name, contact: contact, aliases: aliases)
    }

    /// `field` is evaluated only when throwing.
    /// An identifier echoed in every decision is refused beyond `OutputBounds.identifierBytes`.
    static func checkLength(_ s: String, field: String) throws(InputError) {
        let bytes = s.utf8.count
        guard bytes <= OutputBounds.identifierBytes else {
            throw InputError(field: field, "is \(bytes) bytes; at most \(OutputBounds.identifierBytes) are allowed")
        }
    }

    static func optionalString(_ value: JSONValue?, field: @autoclosure () -> String) throws(InputError) -> String? {
        guard let value, !value.isNull else { return nil }
        guard case .string(let s) = value else {
            throw InputError(field: field(), "must be a string, got \(value.quotedForError)")
        }
        return s
    }

    static func optionalInteger(_ value: JSONValue?, field: String, allowString: Bool) throws(InputError) -> Int? {
        guard let value, !value.isNull else { return nil }
        if let i = value.intValue { return i }
        if allowString, case .string(let s) = value, let i = Int(s) { return i }
        throw InputError(field: field, "must be an integer, got \(value.quotedForError)")
    }

    static func flag(_ value: JSONValue?, field: String) throws(InputError) -> Bool {
        guard let value, !value.isNull else { return false }
        if let i = value.intValue, i == 0 || i == 1 { return i == 1 }
        if let b = value.boolValue { return b }
        throw InputError(field: field, "must be 0 or 1, got \(value.quotedForError)")
    }
}
