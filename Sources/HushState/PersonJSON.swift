package import HushCore
import HushJSON

/// Persons as JSON text in the state file: `{"handle":…,"name":…,"contact":…,"aliases":[…]}`,
/// absent members omitted. Round-trips exactly.
package enum PersonJSON {
    package struct DecodingError: Error, Sendable, CustomStringConvertible {
        package var description: String
    }

    package static func encode(_ person: Person) -> String {
        var w = JSONWriter(capacity: 64)
        w.write(value(of: person))
        return String(decoding: w.bytes, as: UTF8.self)
    }

    package static func encode(_ people: [Person]) -> String {
        var w = JSONWriter(capacity: 64 * max(1, people.count))
        w.write(.array(people.map(value(of:))))
        return String(decoding: w.bytes, as: UTF8.self)
    }

    package static func decodePerson(_ text: String) throws -> Person {
        try person(from: parse(text))
    }

    package static func decodePeople(_ text: String) throws -> [Person] {
        guard case .array(let items) = try parse(text) else {
            throw DecodingError(description: "people: expected a JSON array, got \(text.prefix(80))")
        }
        return try items.map(person(from:))
    }

    private static func value(of person: Person) -> JSONValue {
        var pairs: [(String, JSONValue)] = []
        if let handle = person.handle { pairs.append(("handle", .string(handle))) }
        if let name = person.name { pairs.append(("name", .string(name))) }
        if let contact = person.contact { pairs.append(("contact", .string(contact))) }
        if !person.aliases.isEmpty { pairs.append(("aliases", .array(person.aliases.map(JSONValue.string)))) }
        return .object(JSONObject(pairs))
    }

    private static func parse(_ text: String) throws -> JSONValue {
        do {
            return try JSONParser.parse(text)
        } catch {
            throw DecodingError(description: "a person is not valid JSON (\(error.message)): \(text.prefix(80))")
        }
    }

    private static func person(from json: JSONValue) throws -> Person {
        guard case .object(let o) = json else {
            throw DecodingError(description: "a person: expected a JSON object, got \(json.typeName)")
        }
        func string(_ key: String) throws -> String? {
            switch o[key] {
            case nil, .null?: return nil
            case .string(let s)?: return s
            case let other?:
                throw DecodingError(description: "a person's \(key): expected a string, got \(other.typeName)")
            }
        }
        var aliases: [String] = []
        switch o["aliases"] {
        case nil, .null?: break
        case .array(let items)?:
            aliases = try items.map {
                guard case .string(let s) = $0 else {
                    throw DecodingError(description: "a person's aliases: expected strings, got \($0.typeName)")
                }
                return s
            }
        case let other?:
            throw DecodingError(description: "a person's aliases: expected an array, got \(other.typeName)")
        }
        return Person(
            handle: try string("handle"), name: try string("name"), contact: try string("contact"), aliases: aliases)
    }
}
