import Foundation
import HushCore
import Synchronization
import XCTest

/// `Directory.PeopleList` (a focus's people prepared once) answers as `person(_:isAmong:)` does.
final class PeopleListTests: XCTestCase {
    let contacts = [
        Contact(
            handle: "alice@example.com", name: "Alice", favorite: true,
            aliases: ["+1 617 555 1212", "alice.work@example.org"]),
        Contact(handle: "+49 30 1234567", name: "Bob"),
        Contact(handle: "Carol@Example.com", name: "Carol", aliases: ["030 7654321", "carol-chat-id"]),
        Contact(handle: "+44 20 7946 0958", name: "Dan", aliases: ["dan@example.net"]),
        // Shares a number with Bob, differently written: the first contact wins.
        Contact(handle: "0049 30 1234567", name: "Bob (old)", aliases: ["bob@old.example"]),
        Contact(handle: "erin@example.com", name: "Erin", aliases: ["4917055500404"]),
        Contact(handle: "555 1212", name: "Short"),
    ]

    /// Handles of many shapes: e-mails in any case, phone numbers with and without country code,
    /// trunk 0 or 00 prefix, opaque ids, contacts' aliases and people no contact knows.
    let shapes = [
        "alice@example.com", "ALICE@EXAMPLE.COM", "mailto:Alice@Example.com", " alice@example.com ",
        "+1 617 555 1212", "6175551212", "16175551212", "tel:(617) 555-1212", "001 617 555 1212", "617 555 1213",
        "alice.work@example.org", "Alice.Work@Example.org",
        "+49 30 1234567", "030 1234567", "0049301234567", "301234567", "1234567", "49301234567", "+49 30 1234568",
        "carol@example.com", "+49 30 7654321", "307654321", "7654321", "CAROL-CHAT-ID", "carol-chat",
        "+44 20 7946 0958", "020 7946 0958", "2079460958", "dan@example.net", "Dan@Example.NET",
        "bob@old.example", "erin@example.com", "+49 170 5550 0404", "0170 55500404", "17055500404",
        "555 1212", "5551212", "+1 555 1212",
        "stranger@example.com", "+33 1 23 45 67 89", "0033123456789", "123456789", "random-id", "", "  ",
        "alice@example.com\u{a0}", "+49\u{a0}30\u{a0}1234567", "ünïcode@example.com", "Ünïcode@Example.com",
    ]

    func testPreparedListAnswersAsIsAmong() {
        let lists: [[String]] = [
            [], ["alice@example.com"], ["6175551212"], ["+49 30 1234567"], ["030 1234567"], ["bob@old.example"],
            ["carol-chat-id"], ["CAROL@example.com", "dan@example.net"], ["stranger@example.com"], ["1234567"],
            ["301234567", "random-id"], ["0033 1 23 45 67 89"], ["erin@example.com", "+49 170 5550 0404"],
            ["5551212"], ["ünïcode@example.com"], ["alice@example.com", "alice@example.com", "+1 617 555 1212"],
            shapes,
        ]
        for listed in lists {
            let directory = Directory(contacts: contacts, listed: listed)
            let unprepared = Directory(contacts: contacts)
            let list = directory.peopleList(listed)
            XCTAssertEqual(list.entries, listed)
            for handle in shapes {
                for aliases in [[], ["random-id"], ["+49 30 1234567"], ["stranger@example.com", "0170 55500404"]] {
                    let person = Person(handle: handle.isEmpty ? nil : handle, aliases: aliases)
                    let expected = unprepared.person(person, isAmong: listed)
                    XCTAssertEqual(
                        directory.person(directory.resolve(person), isIn: list), expected,
                        "\(handle) + \(aliases) among \(listed)")
                    XCTAssertEqual(directory.person(person, isAmong: listed), expected)
                }
            }
        }
    }

    func testListPreparedFromAnyEntriesOfAnotherDirectoryConfiguration() {
        // A list need not be among the directory's `listed`: it is expanded then.
        let directory = Directory(contacts: contacts)
        let list = directory.peopleList(["+1 617 555 1212"])
        XCTAssertTrue(directory.person(directory.resolve(Person(handle: "alice.work@example.org")), isIn: list))
        XCTAssertFalse(directory.person(directory.resolve(Person(handle: "carol@example.com")), isIn: list))
    }

    /// The all-ASCII fast path normalises as the general one (taken for any non-ASCII handle).
    func testASCIIAndGeneralNormalisationAgree() {
        let pairs: [(String, String)] = [
            ("0049 30 1234567", "0049\u{a0}30 1234567"),
            ("+49 30 1234567", "+49\u{a0}30\u{a0}1234567"),
            ("00 1 617 555 1212", "00\u{a0}1 617 555 1212"),
            ("0 0 4 9", "0\u{a0}0 4 9"),
            ("030 1234567", "030\u{a0}1234567"),
            ("Alice@Example.com", "Alice@Example.com\u{2003}"),
            ("MAILTO:Alice@Example.com", "\u{2003}MAILTO:Alice@Example.com"),
            ("tel:+1 617 555 1212", "tel:+1\u{a0}617 555 1212"),
            ("App-User-17", "App-User-17\u{a0}"),
            ("12", "12\u{a0}"),
        ]
        for (ascii, general) in pairs {
            XCTAssertEqual(Handle(ascii), Handle(general), "\(ascii) / \(general)")
        }
        XCTAssertEqual(Handle("0049 30 1234567").key, "49301234567")
        XCTAssertEqual(Handle("0049 30 1234567").kind, .phone)
        XCTAssertEqual(Handle("(0)0 1 2").key, "12")
        XCTAssertEqual(Handle("0 1 00").key, "0100")
        XCTAssertEqual(Handle("mailto:Alice@Example.com").key, "alice@example.com")
        XCTAssertEqual(Handle(" tel:12 ").kind, .other)
        XCTAssertEqual(Handle(" tel:12 ").key, "12")
        XCTAssertEqual(Handle("").kind, .other)
    }

    /// `resolve` keeps each thread's last answers by handle: they stay the answers of the directory
    /// asked, among 300 directories that number the same contacts in three orders (more than the
    /// cache has slots, so they share slots: an answer taken from another order names another
    /// contact), asked in turn, on several threads at once.
    func testAThreadsResolvedHandlesAreEachDirectorysOwn() {
        let orders = [contacts, contacts.reversed(), Array(contacts[3...] + contacts[..<3])]
        let directories = (0..<300).map { Directory(contacts: orders[$0 % 3]) }
        let people = shapes.map { Person(handle: $0) }
        let expected = directories.map { directory in people.map { directory.contact(for: $0) } }
        let mismatches = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            var found = 0
            for _ in 0..<2 {
                for (i, person) in people.enumerated() {
                    for (d, directory) in directories.enumerated()
                    where directory.contact(for: directory.resolve(person)) != expected[d][i] {
                        found += 1
                    }
                }
            }
            mismatches.withLock { $0 += found }
        }
        XCTAssertEqual(mismatches.withLock { $0 }, 0)
    }
}
