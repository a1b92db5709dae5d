import HushCore
import HushState
import XCTest

/// The behaviour revision 2 of the reference changed (docs/decisions.md, "Revision 2").
final class RevisionTwoTests: XCTestCase {
    // MARK: sound only when asked for

    func testSoundOnlyWhenThePayloadAsksForOne() {
        let h = PipelineHarness(Policy(apps: ["pager": AppSettings(criticalAlerts: true)]))
        let silent = h.decide(note())
        XCTAssertEqual(silent.delivery, .alert)
        XCTAssertEqual(silent.alert?.sound, false)
        XCTAssertNil(silent.alert?.soundName)
        XCTAssertEqual(silent.alert?.vibrate, true, "active still vibrates and wakes the screen")
        XCTAssertTrue(silent.reasons.contains { $0.contains("asks for none") }, "\(silent.reasons)")

        let named = h.decide(note(sound: "\"ping.caf\""))
        XCTAssertEqual(named.alert?.sound, true)
        XCTAssertEqual(named.alert?.soundName, "ping.caf")
        XCTAssertEqual(h.decide(note(sound: "\"default\"")).alert?.soundName, "default")
        XCTAssertEqual(h.decide(note(sound: "{\"name\":\"x.caf\",\"volume\":0.5}")).alert?.sound, true)

        // Critical always sounds, through the ringer switch.
        let critical = h.decide(note("pager", level: "critical"))
        XCTAssertEqual(critical.alert?.sound, true)
        XCTAssertEqual(critical.alert?.soundName, "default")
        XCTAssertEqual(critical.alert?.bypassRinger, true)
    }

    // MARK: nothing to show

    func testPushesWithNothingToShowAreBackgroundWithTheirBadge() {
        let h = PipelineHarness(Policy())
        let badgeOnly = h.decide("{\"app\":\"mail\",\"payload\":{\"aps\":{\"badge\":4}}}")
        XCTAssertEqual(badgeOnly.delivery, .background)
        XCTAssertEqual(badgeOnly.badge, 4)
        XCTAssertNil(badgeOnly.alert)
        XCTAssertNil(badgeOnly.group)

        let empty = h.decide("{\"app\":\"mail\",\"payload\":{\"aps\":{}}}")
        XCTAssertEqual(empty.delivery, .background)
        XCTAssertNil(empty.badge)

        let contentAvailable = h.decide(
            "{\"app\":\"mail\",\"payload\":{\"aps\":{\"content-available\":1,\"badge\":2}}}")
        XCTAssertEqual(contentAvailable.delivery, .background)
        XCTAssertEqual(contentAvailable.badge, 2)

        let emptyAlert = h.decide("{\"app\":\"mail\",\"payload\":{\"aps\":{\"alert\":{},\"badge\":1}}}")
        XCTAssertEqual(emptyAlert.delivery, .background)

        // A sound, a title or a sender is something to show.
        XCTAssertEqual(h.decide("{\"app\":\"mail\",\"payload\":{\"aps\":{\"sound\":\"default\"}}}").delivery, .alert)
        XCTAssertEqual(
            h.decide("{\"app\":\"mail\",\"payload\":{\"aps\":{\"alert\":{\"title\":\"Hi\"}}}}").delivery, .alert)
        let call =
            "{\"app\":\"phone\",\"payload\":{\"aps\":{}},\"communication\":{\"kind\":\"call\",\"sender\":{\"handle\":\"+15550100\"}}}"
        XCTAssertEqual(h.decide(call).delivery, .alert)

        // An app that shows no badges sets none, even from the background.
        let noBadges = PipelineHarness(Policy(apps: ["mail": AppSettings(badges: false)]))
        XCTAssertNil(noBadges.decide("{\"app\":\"mail\",\"payload\":{\"aps\":{\"badge\":4}}}").badge)
    }

    // MARK: badges

    func testBadgesFollowTheDelivery() {
        let policy = Policy(
            apps: [
                "quietapp": AppSettings(delivery: .quiet), "trial": AppSettings(authorization: .provisional),
                "news": AppSettings(summary: true),
            ],
            summaryTimes: [8 * 60], focuses: [FocusSettings(name: "Work")])
        let h = PipelineHarness(policy)
        XCTAssertEqual(h.decide(note(badge: 3)).badge, 3, "alert")
        let quietApp = h.decide(note("quietapp", badge: 3))
        XCTAssertEqual(quietApp.delivery, .quiet)
        XCTAssertNil(quietApp.badge, "an app delivered quietly is Notification Center only")
        let provisional = h.decide(note("trial", badge: 3))
        XCTAssertEqual(provisional.delivery, .quiet)
        XCTAssertNil(provisional.badge)
        let passive = h.decide(note(level: "passive", badge: 3))
        XCTAssertEqual(passive.delivery, .quiet)
        XCTAssertEqual(passive.badge, 3, "a passive notification keeps its badge")
        let held = h.decide(note("news", badge: 3))
        XCTAssertEqual(held.delivery, .summary)
        XCTAssertNil(held.badge)

        let focused = PipelineHarness(policy, context: context("{\"focus\":\"Work\"}"))
        let silenced = focused.decide(note(badge: 5))
        XCTAssertEqual(silenced.delivery, .silenced)
        XCTAssertEqual(silenced.badge, 5)
    }

    // MARK: a forced alert keeps its level's style

    func testAForcedAlertOnAPassiveNotificationStaysSilent() {
        let rules = ClosureRules { _, _ in RuleChanges(delivery: .alert) }
        let h = PipelineHarness(
            Policy(rules: [Policy.RuleInfo(name: "test rule", file: "test.lua", line: 1)]), rules: rules)
        let d = h.decide(note(level: "passive", sound: "\"default\""))
        XCTAssertEqual(d.delivery, .alert)
        XCTAssertEqual(d.alert?.sound, false)
        XCTAssertEqual(d.alert?.vibrate, false)
        XCTAssertEqual(d.alert?.wakeScreen, false)
        XCTAssertEqual(d.alert?.banner, false, "locked by default: on the lock screen, no banner")
        XCTAssertEqual(d.alert?.lockScreen, true)
        XCTAssertTrue(d.reasons.contains("alert: passive, so no sound, vibration or screen wake"), "\(d.reasons)")
        XCTAssertTrue(d.reasons.contains("a rule forced delivery alert"), "\(d.reasons)")

        let active = h.decide(note(sound: "\"default\""))
        XCTAssertEqual(active.alert?.sound, true)
        XCTAssertEqual(active.alert?.vibrate, true)
    }

    // MARK: focus on every decision

    func testEveryDecisionNamesTheFocus() {
        let h = PipelineHarness(
            Policy(focuses: [FocusSettings(name: "Sleep")]), context: context("{\"focus\":\"Sleep\"}"))
        let background = h.decide(
            "{\"app\":\"mail\",\"headers\":{\"apns-push-type\":\"background\"},\"payload\":{\"aps\":{\"content-available\":1}}}"
        )
        XCTAssertEqual(background.delivery, .background)
        XCTAssertEqual(background.focus, "Sleep")
        let expired = h.decide(note(headers: "{\"apns-expiration\":\"1000\"}"))
        XCTAssertEqual(expired.delivery, .dropped)
        XCTAssertEqual(expired.focus, "Sleep")
        let withdrawn = h.decide("{\"app\":\"mail\",\"id\":\"x\",\"withdraw\":true}")
        XCTAssertEqual(withdrawn.delivery, .withdrawn)
        XCTAssertEqual(withdrawn.focus, "Sleep")
    }

    // MARK: collapse

    func testCollapseByCollapseIDFirst() {
        let h = PipelineHarness(Policy())
        let first = h.decide(note("scores", id: "m1", headers: "{\"apns-collapse-id\":\"match-7\"}"))
        XCTAssertNil(first.replaces)
        let second = h.decide(note("scores", id: "m2", headers: "{\"apns-collapse-id\":\"match-7\"}"))
        XCTAssertEqual(second.id, "m2")
        XCTAssertEqual(second.replaces, "match-7")
        XCTAssertEqual(second.group?.count, 1, "replaced in place: no second entry")
        // The same id under another collapse id is another notification.
        let third = h.decide(note("scores", id: "m2", headers: "{\"apns-collapse-id\":\"match-8\"}"))
        XCTAssertNil(third.replaces)
        XCTAssertEqual(third.group?.count, 2)
        // Without a collapse id, the id collapses.
        h.decide(note("scores", id: "plain"))
        XCTAssertEqual(h.decide(note("scores", id: "plain")).replaces, "plain")
    }

    func testAReplacedCallIsNotASecondCall() {
        let sleep = FocusSettings(name: "Sleep", calls: .nobody, repeatedCalls: true)
        let h = PipelineHarness(Policy(focuses: [sleep]), context: context("{\"focus\":\"Sleep\"}"))
        let first = h.decide(
            note("phone", id: "call-1", date: "2026-11-23T03:00:00+01:00", communication: call(from: "+15550100")))
        XCTAssertEqual(first.delivery, .silenced)
        let update = h.decide(
            note("phone", id: "call-1", date: "2026-11-23T03:01:00+01:00", communication: call(from: "+15550100")))
        XCTAssertEqual(update.replaces, "call-1")
        XCTAssertEqual(
            update.delivery, .silenced, "an update of the same call must not ring through: \(update.reasons)")
        XCTAssertNil(update.breakthrough)
        // A real second call (another id) within 3 minutes of the first does ring.
        let again = h.decide(
            note("phone", id: "call-2", date: "2026-11-23T03:02:00+01:00", communication: call(from: "+15550100")))
        XCTAssertEqual(again.breakthrough, .repeatedCall)
        XCTAssertEqual(h.store.calls(user: "default", since: 0).count, 2, "the update was not remembered as a call")
    }

    func testAReplacementDoesNotCountAgainForRecent() {
        let h = PipelineHarness(Policy())
        h.decide(note("chat", id: "a", date: "2026-11-23T10:00:00+01:00"))
        h.decide(note("chat", id: "a", date: "2026-11-23T10:01:00+01:00"))
        h.decide(note("chat", id: "b", date: "2026-11-23T10:02:00+01:00"))
        XCTAssertEqual(h.store.recent(user: "default", since: 0).map(\.id), ["a", "b"])
    }

    // MARK: withdraw

    func testWithdrawADeliveredNotification() {
        let h = PipelineHarness(Policy())
        h.decide(note("chat", id: "a", thread: "t", summaryArg: "Ana"))
        h.decide(note("chat", id: "b", thread: "t", summaryArg: "Ben"))
        h.decide(note("chat", id: "c", thread: "t", summaryArg: "Cy"))
        let d = h.decide("{\"app\":\"chat\",\"id\":\"b\",\"withdraw\":true}")
        XCTAssertEqual(d.delivery, .withdrawn)
        XCTAssertEqual(d.replaces, "b")
        XCTAssertEqual(d.group?.id, "chat/t")
        XCTAssertEqual(d.group?.count, 2)
        XCTAssertEqual(d.group?.summary, "1 more notification", "the line under the group as it now is")
        XCTAssertNil(d.alert)
        XCTAssertNil(d.badge)
        XCTAssertEqual(h.store.groupMembers(user: "default", groupID: "chat/t").map(\.id), ["a", "c"])
        // The next one joins a group of two.
        XCTAssertEqual(h.decide(note("chat", id: "d", thread: "t")).group?.count, 3)

        let nothing = h.decide("{\"app\":\"chat\",\"id\":\"zzz\",\"withdraw\":true}")
        XCTAssertEqual(nothing.delivery, .withdrawn)
        XCTAssertNil(nothing.replaces)
        XCTAssertTrue(nothing.reasons[0].hasPrefix("nothing to withdraw"), "\(nothing.reasons)")
        // Another app's notification with that id is not touched.
        XCTAssertNil(h.decide("{\"app\":\"other\",\"id\":\"a\",\"withdraw\":true}").replaces)
    }

    func testWithdrawByCollapseID() {
        let h = PipelineHarness(Policy())
        h.decide(note("scores", id: "m1", headers: "{\"apns-collapse-id\":\"match-7\"}"))
        let d = h.decide("{\"app\":\"scores\",\"withdraw\":true,\"headers\":{\"apns-collapse-id\":\"match-7\"}}")
        XCTAssertEqual(d.replaces, "match-7")
        XCTAssertEqual(d.group?.count, 0)
    }

    func testAWithdrawnHeldNotificationIsNotInItsSummary() {
        let h = PipelineHarness(Policy(apps: ["news": AppSettings(summary: true)], summaryTimes: [18 * 60]))
        XCTAssertEqual(h.decide(note("news", id: "n1", date: "2026-11-23T10:00:00+01:00")).delivery, .summary)
        XCTAssertEqual(h.decide(note("news", id: "n2", date: "2026-11-23T10:05:00+01:00")).delivery, .summary)
        let d = h.decide("{\"app\":\"news\",\"id\":\"n1\",\"withdraw\":true,\"date\":\"2026-11-23T11:00:00+01:00\"}")
        XCTAssertEqual(d.replaces, "n1")
        XCTAssertNil(d.group)
        let due = h.store.takeDueSummaries(user: "default", upTo: RFC3339.parse("2026-11-23T18:00:00+01:00")!)
        XCTAssertEqual(due.flatMap(\.notifications).map(\.id), ["n2"])
    }

    // MARK: summary lines

    func testCategoriesWithTheSameFormatAreOnePiece() {
        let categories = [
            "A": CategorySettings(summaryFormat: PluralFormat(one: "%u more item", other: "%u more items")),
            "B": CategorySettings(summaryFormat: PluralFormat(one: "%u more item", other: "%u more items")),
            "INVITE": CategorySettings(
                summaryFormat: PluralFormat(one: "%u more invitation", other: "%u more invitations")),
        ]
        func line(_ earlier: [String?]) -> String? {
            let h = PipelineHarness(Policy(categories: categories))
            for (i, category) in earlier.enumerated() {
                h.decide(note("chat", id: "e\(i)", thread: "t", category: category))
            }
            return h.decide(note("chat", id: "last", thread: "t")).group?.summary
        }
        XCTAssertEqual(line([nil, "UNDECLARED"]), "2 more notifications", "no format: both the default")
        XCTAssertEqual(line(["A", "B"]), "2 more items")
        XCTAssertEqual(line(["A", "INVITE", "B"]), "2 more items and 1 more invitation")
        XCTAssertEqual(line(["INVITE", nil, "OTHER"]), "1 more invitation and 2 more notifications")
    }

    func testHiddenPreviewsNameNobodyInTheSummaryLine() {
        let categories = [
            "MESSAGE": CategorySettings(
                summaryFormat: PluralFormat(
                    one: "%u more message from %@",
                    other: "%u more messages from %@"))
        ]
        let hidden = PipelineHarness(Policy(apps: ["chat": AppSettings(previews: .never)], categories: categories))
        hidden.decide(note("chat", id: "a", thread: "t", category: "MESSAGE", summaryArg: "Alice"))
        hidden.decide(note("chat", id: "b", thread: "t", category: "MESSAGE", summaryArg: "Bob"))
        let d = hidden.decide(note("chat", id: "c", thread: "t", category: "MESSAGE", summaryArg: "Carol"))
        XCTAssertEqual(d.group?.summary, "2 more notifications")
        XCTAssertEqual(d.placeholder, "Notification")

        let shown = PipelineHarness(Policy(categories: categories))
        shown.decide(note("chat", id: "a", thread: "t", category: "MESSAGE", summaryArg: "Alice"))
        XCTAssertEqual(
            shown.decide(note("chat", id: "b", thread: "t", category: "MESSAGE")).group?.summary,
            "1 more message from Alice")

        // previews = "unlocked": names nobody while locked, names them while unlocked.
        let whenUnlocked = Policy(apps: ["chat": AppSettings(previews: .unlocked)], categories: categories)
        let locked = PipelineHarness(whenUnlocked, context: context("{\"locked\":true}"))
        locked.decide(note("chat", id: "a", thread: "t", category: "MESSAGE", summaryArg: "Alice"))
        XCTAssertEqual(locked.decide(note("chat", id: "b", thread: "t")).group?.summary, "1 more notification")
        let unlocked = PipelineHarness(whenUnlocked, context: context("{\"locked\":false}"))
        unlocked.decide(note("chat", id: "a", thread: "t", category: "MESSAGE", summaryArg: "Alice"))
        XCTAssertEqual(unlocked.decide(note("chat", id: "b", thread: "t")).group?.summary, "1 more message from Alice")
    }

    // MARK: focus filters narrow an allowed app

    func testFocusFiltersNarrowAnAppTheyNeverWiden() {
        let work = FocusSettings(name: "Work", apps: ["mail"], filters: ["mail": ["work"], "chat": ["work"]])
        let h = PipelineHarness(
            Policy(apps: ["mail": AppSettings(criticalAlerts: true)], focuses: [work]),
            context: context("{\"focus\":\"Work\"}"))
        func decide(_ app: String, _ criteria: String?, level: String? = nil) -> Decision {
            h.decide(note(app, level: level, extraAPS: criteria.map { "\"filter-criteria\":\"\($0)\"" } ?? ""))
        }
        XCTAssertEqual(decide("mail", "work").breakthrough, .app, "an allowed app, its matching content")
        XCTAssertEqual(decide("mail", "personal").delivery, .silenced, "an allowed app, filtered out")
        XCTAssertEqual(decide("mail", nil).breakthrough, .app, "no criteria: filters do not apply")
        XCTAssertEqual(
            decide("chat", "work").delivery, .silenced, "a filter never lets in an app the focus does not allow")
        XCTAssertEqual(decide("mail", "personal", level: "critical").breakthrough, .critical)
        XCTAssertEqual(decide("mail", "personal", level: "time-sensitive").delivery, .silenced)
    }

    // MARK: small ones

    func testAPersonLetThroughBySuggestionsIsToldSo() {
        let focus = FocusSettings(name: "Work", suggested: 1)
        let h = PipelineHarness(Policy(focuses: [focus]), context: context("{\"focus\":\"Work\"}"))
        let now = RFC3339.parse("2026-11-23T10:00:00+01:00")!
        h.store.addInteractions(
            (1...3).map {
                Interaction(
                    date: now - Double($0) * 86400, direction: .outgoing, kind: .message,
                    people: [Person(handle: "dana@example.com")])
            })
        let d = h.decide(
            note("chat", date: "2026-11-23T10:00:00+01:00", communication: message(from: "dana@example.com")))
        XCTAssertEqual(d.breakthrough, .person)
        XCTAssertTrue(d.reasons.contains { $0.contains("suggested for this focus") }, "\(d.reasons)")
    }
}
