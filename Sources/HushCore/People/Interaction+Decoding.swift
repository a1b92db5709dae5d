package import HushJSON

extension Interaction {
    /// Decodes a donated interaction (docs/reference.md, "People and suggestions"): `date`, `direction`, `kind`, `app`, `people`, `group`,
    /// and optionally `user` (default "default").
    package static func decode(_ json: JSONValue) throws(InputError) -> Interaction {
        guard case .object(let o) = json else {
            throw InputError(field: nil, "an interaction must be a JSON object, got \(json.typeName)")
        }
        let known = ["date", "direction", "kind", "app", "people", "group", "user"]
        for key in o.keys where !known.contains(key) {
            throw InputError(
                field: key,
                "unknown interaction key\(Spelling.hint(for: key, in: known)) (known: \(known.joined(separator: ", ")))"
            )
        }
        guard let dateValue = o["date"] else { throw InputError(field: "date", "is required (RFC 3339)") }
        guard case .string(let dateText) = dateValue, let date = RFC3339.parse(dateText) else {
            throw InputError(
                field: "date", "must be an RFC 3339 time such as 2026-11-22T09:30:00Z, got \(dateValue.quotedForError)")
        }
        guard let d = o["direction"] else {
            throw InputError(field: "direction", "is required (\"outgoing\" or \"incoming\")")
        }
        guard case .string(let ds) = d, let direction = Direction(rawValue: ds) else {
            throw InputError(field: "direction", "must be \"outgoing\" or \"incoming\", got \(d.quotedForError)")
        }
        var kind = Communication.Kind.message
        if let k = o["kind"] {
            guard case .string(let ks) = k, let parsed = Communication.Kind(rawValue: ks) else {
                throw InputError(field: "kind", "must be \"message\" or \"call\", got \(k.quotedForError)")
            }
            kind = parsed
        }
        guard let peopleValue = o["people"] else { throw InputError(field: "people", "is required (a list of people)") }
        guard case .array(let items) = peopleValue, !items.isEmpty else {
            throw InputError(field: "people", "must be a non-empty list of people, got \(peopleValue.quotedForError)")
        }
        var people: [Person] = []
        for (i, item) in items.enumerated() { people.append(try Envelope.decodePerson(item, field: "people[\(i)]")) }
        let app = try Envelope.optionalString(o["app"], field: "app")
        let group = try Envelope.optionalString(o["group"], field: "group")
        var user = "default"
        if let u = o["user"] {
            guard case .string(let s) = u, !s.isEmpty else {
                throw InputError(field: "user", "must be a non-empty string")
            }
            user = s
        }
        return Interaction(
            user: user, date: date, direction: direction, kind: kind, app: app, people: people, group: group)
    }
}
