package import HushJSON

extension Envelope {
    /// Decodes one line of input (a JSON object) straight from its bytes, without building its
    /// tree: the payload and headers stay text until a rule asks for them. This is a fast path:
    /// when it returns nil (any error, anything unusual), parse the line and call
    /// `decode(_:fallbackID:sourceByteCount:)`, which decides and words the error. When it returns
    /// an envelope, it is the one that would have made; `fallbackID` is called exactly when that
    /// would have called it.
    package static func read(line: UnsafeRawBufferPointer, fallbackID: () -> String) -> Envelope? {
        var cursor = JSONCursor(line)
        do {
            return try read(&cursor, lineLength: line.count, fallbackID: fallbackID)
        } catch {
            return nil
        }
    }

    private static func read(_ cursor: inout JSONCursor, lineLength: Int, fallbackID: () -> String) throws(JSONCursor
        .Unsure) -> Envelope
    {
        typealias Unsure = JSONCursor.Unsure
        var seen = Envelope.Members()
        var app: String?
        var id: String?
        var date: Double?
        var user = "default"
        var withdraw = false
        var payload: DeferredJSONObject?
        var headers = ReadHeaders()
        var aps = DecodedAPS()
        var communication: Communication?
        var attachments: [String] = []

        try cursor.beginObject()
        var first = true
        while let key = try cursor.nextKey(&first) {
            switch key.count {
            case 2 where key.equals("id"):
                try seen.insert(Members.id)
                id = try cursor.string()
                guard !id!.isEmpty, id!.utf8.count <= OutputBounds.identifierBytes else { throw Unsure() }
            case 3 where key.equals("app"):
                try seen.insert(Members.app)
                app = try cursor.string()
            case 4 where key.equals("date"):
                try seen.insert(Members.date)
                guard let parsed = RFC3339.parse(bytes: try cursor.plainString()) else { throw Unsure() }
                date = parsed
            case 4 where key.equals("user"):
                try seen.insert(Members.user)
                user = try cursor.string()
                guard !user.isEmpty, user.utf8.count <= OutputBounds.identifierBytes else { throw Unsure() }
            case 7 where key.equals("payload"):
                try seen.insert(Members.payload)
                let start = try cursor.valueStart()
                let (count, apsEnd) = try aps.readPayload(&cursor)
                payload = DeferredJSONObject(
                    checkedText: cursor.bytes(from: start), count: count, afterFirstAPS: apsEnd.map { $0 - start } ?? 0)
            case 7 where key.equals("headers"):
                try seen.insert(Members.headers)
                let start = try cursor.valueStart()
                let count = try headers.read(&cursor)
                headers.text = DeferredJSONObject(checkedText: cursor.bytes(from: start), count: count)
            case 8 where key.equals("withdraw"):
                try seen.insert(Members.withdraw)
                if try !cursor.readNull() { withdraw = try cursor.bool() }
            case 11 where key.equals("attachments"):
                try seen.insert(Members.attachments)
                attachments = try readAttachments(&cursor)
            case 13 where key.equals("communication"):
                try seen.insert(Members.communication)
                communication = try readCommunication(&cursor)
            default:
                try cursor.skipValue()
            }
        }
        guard cursor.isAtEnd() else { throw Unsure() }

        // The values read are moved into the envelope (`take()`, `consume`), not copied: a copy
        // of each text was a retain now and a release when the locals went.
        guard let app = app.take(), !app.isEmpty, app.utf8.count <= OutputBounds.identifierBytes else {
            throw Unsure()
        }
        // A withdraw line needs no payload; any other does.
        guard payload != nil || withdraw else { throw Unsure() }
        let payloadSource = payload.take() ?? DeferredJSONObject()
        // The size APNs sees is the payload written as compact JSON: measured only when the line
        // could hold one over the limit (as `decode` measures it).
        let limit = headers.pushType == "voip" ? maximumVoIPPayloadBytes : maximumPayloadBytes
        if lineLength > limit / compactGrowthBound,
            JSONWriter.byteCount(of: .object(payloadSource.object)) > limit
        {
            throw Unsure()
        }
        let resolvedID: String
        var idIsGenerated = false
        if let id = id.take() {
            resolvedID = id
        } else if let collapseID = headers.collapseID {
            resolvedID = collapseID
        } else if withdraw {
            throw Unsure()
        } else {
            resolvedID = fallbackID()
            idIsGenerated = true
        }
        return Envelope(
            app: app, id: resolvedID, idIsGenerated: idIsGenerated,
            collapseKey: headers.collapseID.take() ?? resolvedID,
            withdraw: withdraw, date: date, user: consume user,
            headersSource: headers.text.take() ?? DeferredJSONObject(),
            payloadSource: payloadSource, hasAlertMember: aps.hasAlertMember,
            pushType: headers.pushType.take(), priority: headers.priority,
            expiration: headers.expiration.map(Double.init),
            title: aps.title.take(), subtitle: aps.subtitle.take(), body: aps.body.take(),
            summaryArgument: aps.summaryArgument.take(), summaryArgumentCount: aps.summaryArgumentCount,
            badge: aps.badge, sound: aps.sound.take(), threadID: aps.threadID.take(), category: aps.category.take(),
            contentAvailable: aps.contentAvailable, mutableContent: aps.mutableContent,
            targetContentID: aps.targetContentID.take(), interruptionLevel: aps.interruptionLevel,
            relevance: aps.relevance, filterCriteria: aps.filterCriteria.take(), communication: communication.take(),
            attachments: consume attachments)
    }

    /// The members of one object read so far, a bit each (named here for the top level; nested
    /// objects number theirs): a member seen twice is left to the parser (its last value wins there).
    fileprivate struct Members {
        static let id: UInt32 = 1
        static let app: UInt32 = 1 << 1
        static let date: UInt32 = 1 << 2
        static let user: UInt32 = 1 << 3
        static let payload: UInt32 = 1 << 4
        static let headers: UInt32 = 1 << 5
        static let withdraw: UInt32 = 1 << 6
        static let attachments: UInt32 = 1 << 7
        static let communication: UInt32 = 1 << 8

        var bits: UInt32 = 0

        @inline(__always)
        mutating func insert(_ bit: UInt32) throws(JSONCursor.Unsure) {
            guard bits & bit == 0 else { throw JSONCursor.Unsure() }
            bits |= bit
        }
    }

    /// `headers`: the four Hush reads, and the object's text.
    private struct ReadHeaders {
        var pushType: String?
        var collapseID: String?
        var priority: Int?
        var expiration: Int?
        var text: DeferredJSONObject?

        /// Returns how many members the headers have (`readObject` leaves a member twice to the
        /// parser).
        mutating func read(_ cursor: inout JSONCursor) throws(JSONCursor.Unsure) -> Int {
            try cursor.readObject(maxMembers: 32) { key, cursor throws(JSONCursor.Unsure) in
                if key.equals("apns-push-type") {
                    pushType = try Envelope.optionalString(&cursor)
                } else if key.equals("apns-collapse-id") {
                    collapseID = try Envelope.optionalString(&cursor)
                    if let collapseID, collapseID.utf8.count > maximumCollapseIDBytes { throw JSONCursor.Unsure() }
                } else if key.equals("apns-priority") {
                    priority = try optionalInteger(&cursor)
                    if let priority, priority != 10 && priority != 5 && priority != 1 { throw JSONCursor.Unsure() }
                } else if key.equals("apns-expiration") {
                    expiration = try optionalInteger(&cursor)
                } else {
                    try cursor.skipValue()
                }
            }
        }

        /// An integer, or a string holding one, or null (as `optionalInteger` reads them).
        func optionalInteger(_ cursor: inout JSONCursor) throws(JSONCursor.Unsure) -> Int? {
            let value = try cursor.value()
            if value.isNull { return nil }
            if let i = value.intValue { return i }
            if case .string(let s) = value, let i = Int(s) { return i }
            throw JSONCursor.Unsure()
        }
    }

}

extension Envelope.DecodedAPS {
    /// The payload object: `aps` is read, every other member only checked. Returns how many
    /// members it has (`readObject` leaves a payload with a member twice, `aps` or another, to the
    /// parser), and where `aps`'s value ends when it is the first member.
    mutating func readPayload(_ cursor: inout JSONCursor) throws(JSONCursor.Unsure) -> (count: Int, apsEnd: Int?) {
        var members = 0
        var apsEnd: Int?
        let count = try cursor.readObject(maxMembers: 32) { key, cursor throws(JSONCursor.Unsure) in
            if key.equals("aps") {
                try read(&cursor)
                if members == 0 { apsEnd = cursor.position }
            } else {
                try cursor.skipValue()
            }
            members += 1
        }
        return (count, apsEnd)
    }

    mutating func read(_ cursor: inout JSONCursor) throws(JSONCursor.Unsure) {
        typealias Unsure = JSONCursor.Unsure
        var seen = Envelope.Members()
        try cursor.beginObject()
        var first = true
        while let key = try cursor.nextKey(&first) {
            switch key.count {
            case 5 where key.equals("alert"):
                try seen.insert(1)
                hasAlertMember = true
                try readAlert(&cursor)
            case 5 where key.equals("badge"):
                try seen.insert(2)
                guard let b = JSONValue.number(try cursor.number()).intValue, b >= 0 else { throw Unsure() }
                badge = b
            case 5 where key.equals("sound"):
                try seen.insert(4)
                try readSound(&cursor)
            case 8 where key.equals("category"):
                try seen.insert(8)
                category = try Envelope.optionalString(&cursor)
            case 9 where key.equals("thread-id"):
                try seen.insert(16)
                threadID = try Envelope.optionalString(&cursor)
            case 15 where key.equals("mutable-content"):
                try seen.insert(32)
                mutableContent = try flag(&cursor)
            case 15 where key.equals("relevance-score"):
                try seen.insert(64)
                let d = try cursor.number()
                guard d >= 0, d <= 1 else { throw Unsure() }
                relevance = d
            case 15 where key.equals("filter-criteria"):
                try seen.insert(128)
                filterCriteria = try Envelope.optionalString(&cursor)
            case 17 where key.equals("content-available"):
                try seen.insert(256)
                contentAvailable = try flag(&cursor)
            case 17 where key.equals("target-content-id"):
                try seen.insert(512)
                targetContentID = try Envelope.optionalString(&cursor)
            case 18 where key.equals("interruption-level"):
                try seen.insert(1024)
                guard let level = InterruptionLevel(rawValue: try cursor.string()) else { throw Unsure() }
                interruptionLevel = level
            default:
                try cursor.skipValue()
            }
        }
    }

    mutating func readAlert(_ cursor: inout JSONCursor) throws(JSONCursor.Unsure) {
        switch try cursor.peek() {
        case 0x22:
            body = try cursor.string()
        case 0x6E:
            _ = try cursor.readNull()
        case 0x7B:
            var seen = Envelope.Members()
            try cursor.beginObject()
            var first = true
            while let key = try cursor.nextKey(&first) {
                if key.equals("title") {
                    try seen.insert(1)
                    title = try Envelope.optionalString(&cursor)
                } else if key.equals("body") {
                    try seen.insert(2)
                    body = try Envelope.optionalString(&cursor)
                } else if key.equals("subtitle") {
                    try seen.insert(4)
                    subtitle = try Envelope.optionalString(&cursor)
                } else if key.equals("summary-arg") {
                    try seen.insert(8)
                    summaryArgument = try Envelope.optionalString(&cursor)
                } else if key.equals("summary-arg-count") {
                    try seen.insert(16)
                    guard let count = JSONValue.number(try cursor.number()).intValue, count > 0 else {
                        throw JSONCursor.Unsure()
                    }
                    summaryArgumentCount = count
                } else {
                    try cursor.skipValue()
                }
            }
        default:
            throw JSONCursor.Unsure()
        }
    }

    mutating func readSound(_ cursor: inout JSONCursor) throws(JSONCursor.Unsure) {
        switch try cursor.peek() {
        case 0x22:
            sound = Envelope.Sound(name: try cursor.string(), critical: false, volume: nil)
        case 0x7B:
            var seen = Envelope.Members()
            var critical = false
            var name: String?
            var volume: Double?
            try cursor.beginObject()
            var first = true
            while let key = try cursor.nextKey(&first) {
                if key.equals("critical") {
                    try seen.insert(1)
                    let value = try cursor.value()
                    guard let flag = value.intValue ?? value.boolValue.map({ $0 ? 1 : 0 }), flag == 0 || flag == 1
                    else { throw JSONCursor.Unsure() }
                    critical = flag == 1
                } else if key.equals("name") {
                    try seen.insert(2)
                    name = try Envelope.optionalString(&cursor)
                } else if key.equals("volume") {
                    try seen.insert(4)
                    let d = try cursor.number()
                    guard d >= 0, d <= 1 else { throw JSONCursor.Unsure() }
                    volume = d
                } else {
                    try cursor.skipValue()
                }
            }
            sound = Envelope.Sound(name: name, critical: critical, volume: volume)
        default:
            throw JSONCursor.Unsure()
        }
    }

    /// 0, 1, true, false or null (false), as `Envelope.flag` reads them.
    func flag(_ cursor: inout JSONCursor) throws(JSONCursor.Unsure) -> Bool {
        switch try cursor.peek() {
        case 0x6E:
            _ = try cursor.readNull()
            return false
        case 0x74, 0x66:
            return try cursor.bool()
        default:
            let i = JSONValue.number(try cursor.number()).intValue
            guard i == 0 || i == 1 else { throw JSONCursor.Unsure() }
            return i == 1
        }
    }
}

extension Envelope {
    /// A string, or null (nil), as `optionalString` reads them.
    fileprivate static func optionalString(_ cursor: inout JSONCursor) throws(JSONCursor.Unsure) -> String? {
        if try cursor.readNull() { return nil }
        return try cursor.string()
    }

    fileprivate static func readAttachments(_ cursor: inout JSONCursor) throws(JSONCursor.Unsure) -> [String] {
        var types: [String] = []
        try cursor.beginArray()
        var first = true
        while try cursor.nextElement(&first) {
            var type: String?
            try cursor.beginObject()
            var firstMember = true
            while let key = try cursor.nextKey(&firstMember) {
                guard key.equals("type") else {
                    try cursor.skipValue()
                    continue
                }
                guard type == nil else { throw JSONCursor.Unsure() }
                let s = try cursor.string()
                guard s == "image" || s == "audio" || s == "video" || s == "file" else { throw JSONCursor.Unsure() }
                type = s
            }
            guard let type else { throw JSONCursor.Unsure() }
            types.append(type)
        }
        return types
    }

    private static func readCommunication(_ cursor: inout JSONCursor) throws(JSONCursor.Unsure) -> Communication {
        var seen = Envelope.Members()
        var kind = Communication.Kind.message
        var sender: Person?
        var recipients: [UInt8]?
        var group, conversation, service: String?
        try cursor.beginObject()
        var first = true
        while let key = try cursor.nextKey(&first) {
            switch key.count {
            case 4 where key.equals("kind"):
                try seen.insert(1)
                guard let parsed = Communication.Kind(rawValue: try cursor.string()) else { throw JSONCursor.Unsure() }
                kind = parsed
            case 6 where key.equals("sender"):
                try seen.insert(2)
                if try !cursor.readNull() { sender = try readPerson(&cursor) }
            case 10 where key.equals("recipients"):
                try seen.insert(4)
                // Checked, and kept as text until asked for (`Communication.recipients`).
                let start = try cursor.valueStart()
                try cursor.beginArray()
                var firstRecipient = true
                var count = 0
                while try cursor.nextElement(&firstRecipient) {
                    try checkPerson(&cursor)
                    count += 1
                }
                recipients = count == 0 ? nil : cursor.bytes(from: start)
            case 5 where key.equals("group"):
                try seen.insert(8)
                group = try Envelope.optionalString(&cursor)
            case 12 where key.equals("conversation"):
                try seen.insert(16)
                conversation = try Envelope.optionalString(&cursor)
            case 7 where key.equals("service"):
                try seen.insert(32)
                service = try Envelope.optionalString(&cursor)
            default:
                try cursor.skipValue()
            }
        }
        guard let recipients else {
            return Communication(
                kind: kind, sender: sender, group: group, conversation: conversation, service: service)
        }
        return Communication(
            kind: kind, sender: sender, recipientsText: recipients, group: group, conversation: conversation,
            service: service)
    }

    /// The people of `text` (a JSON array of people that `checkPerson` accepted), as `readPerson`
    /// reads them.
    static func readRecipients(_ text: [UInt8]) -> [Person] {
        text.withUnsafeBytes { bytes in
            var cursor = JSONCursor(bytes)
            do throws(JSONCursor.Unsure) {
                var people: [Person] = []
                people.reserveCapacity(4)
                try cursor.beginArray()
                var first = true
                while try cursor.nextElement(&first) { people.append(try readPerson(&cursor)) }
                return people
            } catch {
                // The cursor gives up where the parser decides: the same text, the parser's way.
                guard case .array(let items)? = try? JSONParser.parse(bytes) else { return [] }
                return items.enumerated().compactMap { i, item in try? decodePerson(item, at: .recipient(i)) }
            }
        }
    }

    /// Reads past a person, checking it as `readPerson` would read it (a handle string, or an
    /// object naming at least a handle, a name, a contact or an alias), without making its texts.
    private static func checkPerson(_ cursor: inout JSONCursor) throws(JSONCursor.Unsure) {
        if try cursor.peek() == 0x22 { return try cursor.skipValue() }
        var seen = Envelope.Members()
        var named = false
        try cursor.beginObject()
        var first = true
        while let key = try cursor.nextKey(&first) {
            let bit: UInt32
            switch key.count {
            case 6 where key.equals("handle"): bit = 1
            case 4 where key.equals("name"): bit = 2
            case 7 where key.equals("contact"): bit = 4
            case 7 where key.equals("aliases"): bit = 8
            default: bit = 0
            }
            guard bit != 0 else {
                try cursor.skipValue()
                continue
            }
            try seen.insert(bit)
            if bit == 8 {
                try cursor.beginArray()
                var firstAlias = true
                while try cursor.nextElement(&firstAlias) {
                    try skipString(&cursor)
                    named = true
                }
            } else if try !cursor.readNull() {
                try skipString(&cursor)
                named = true
            }
        }
        guard named else { throw JSONCursor.Unsure() }
    }

    /// Reads past a string (what `cursor.string()` would read).
    private static func skipString(_ cursor: inout JSONCursor) throws(JSONCursor.Unsure) {
        guard try cursor.peek() == 0x22 else { throw JSONCursor.Unsure() }
        try cursor.skipValue()
    }

    /// A person object, or a bare handle string, as `decodePerson` reads them.
    static func readPerson(_ cursor: inout JSONCursor) throws(JSONCursor.Unsure) -> Person {
        if try cursor.peek() == 0x22 { return Person(handle: try cursor.string()) }
        var seen = Envelope.Members()
        var handle, name, contact: String?
        var aliases: [String] = []
        try cursor.beginObject()
        var first = true
        while let key = try cursor.nextKey(&first) {
            if key.equals("handle") {
                try seen.insert(1)
                handle = try Envelope.optionalString(&cursor)
            } else if key.equals("name") {
                try seen.insert(2)
                name = try Envelope.optionalString(&cursor)
            } else if key.equals("contact") {
                try seen.insert(4)
                contact = try Envelope.optionalString(&cursor)
            } else if key.equals("aliases") {
                try seen.insert(8)
                try cursor.beginArray()
                var firstAlias = true
                while try cursor.nextElement(&firstAlias) { aliases.append(try cursor.string()) }
            } else {
                try cursor.skipValue()
            }
        }
        guard handle != nil || name != nil || contact != nil || !aliases.isEmpty else { throw JSONCursor.Unsure() }
        return Person(handle: handle, name: name, contact: contact, aliases: aliases)
    }
}
