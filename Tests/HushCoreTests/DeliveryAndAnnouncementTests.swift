import HushCore
import XCTest

final class DeliveryAndAnnouncementTests: XCTestCase {
    func testAlertFieldsTable() {
        struct Row {
            var ctx: String
            var app: AppSettings
            var level: String?
            var sound: String?
            var expect: Decision.Alert?
            var delivery: Decision.Delivery
        }
        let rows: [Row] = [
            Row(
                ctx: "{}", app: AppSettings(), level: nil, sound: "\"ping.caf\"",
                expect: .init(
                    sound: true, soundName: "ping.caf", volume: nil, vibrate: true, wakeScreen: true, banner: false,
                    lockScreen: true, bypassRinger: false), delivery: .alert),
            Row(
                ctx: "{\"locked\":false}", app: AppSettings(), level: nil, sound: "\"default\"",
                expect: .init(
                    sound: true, soundName: "default", volume: nil, vibrate: true, wakeScreen: true, banner: true,
                    lockScreen: false, bypassRinger: false), delivery: .alert),
            Row(
                ctx: "{\"ringer\":\"silent\"}", app: AppSettings(), level: nil, sound: "\"default\"",
                expect: .init(
                    sound: false, soundName: nil, volume: nil, vibrate: true, wakeScreen: true, banner: false,
                    lockScreen: true, bypassRinger: false), delivery: .alert),
            Row(
                ctx: "{\"locked\":false}", app: AppSettings(sounds: false, banners: false), level: nil,
                sound: "\"default\"",
                expect: .init(
                    sound: false, soundName: nil, volume: nil, vibrate: true, wakeScreen: true, banner: false,
                    lockScreen: false, bypassRinger: false), delivery: .alert),
            Row(
                ctx: "{\"ringer\":\"silent\"}", app: AppSettings(criticalAlerts: true, sounds: false),
                level: "critical", sound: "{\"critical\":1,\"name\":\"alarm.caf\",\"volume\":0.4}",
                expect: .init(
                    sound: true, soundName: "alarm.caf", volume: 0.4, vibrate: true, wakeScreen: true, banner: false,
                    lockScreen: true, bypassRinger: true), delivery: .alert),
            Row(
                ctx: "{}", app: AppSettings(criticalAlerts: true), level: "critical", sound: nil,
                expect: .init(
                    sound: true, soundName: "default", volume: 1.0, vibrate: true, wakeScreen: true, banner: false,
                    lockScreen: true, bypassRinger: true), delivery: .alert),
            Row(ctx: "{}", app: AppSettings(), level: "passive", sound: nil, expect: nil, delivery: .quiet),
            Row(
                ctx: "{}", app: AppSettings(delivery: .quiet), level: "time-sensitive", sound: nil, expect: nil,
                delivery: .quiet),
            Row(
                ctx: "{}", app: AppSettings(criticalAlerts: true, delivery: .quiet), level: "critical", sound: nil,
                expect: .init(
                    sound: true, soundName: "default", volume: 1.0, vibrate: true, wakeScreen: true, banner: false,
                    lockScreen: true, bypassRinger: true), delivery: .alert),
        ]
        for (i, row) in rows.enumerated() {
            let h = PipelineHarness(Policy(apps: ["com.example.app": row.app]), context: context(row.ctx))
            let d = h.decide(note(level: row.level, sound: row.sound))
            XCTAssertEqual(d.delivery, row.delivery, "row \(i)")
            XCTAssertEqual(d.alert, row.expect, "row \(i)")
        }
    }

    func testBadgesFollowTheAppSetting() {
        XCTAssertEqual(PipelineHarness(Policy()).decide(note(badge: 4)).badge, 4)
        XCTAssertNil(
            PipelineHarness(Policy(apps: ["com.example.app": AppSettings(badges: false)])).decide(note(badge: 4)).badge)
    }

    func announcementPolicy(_ apps: [String: AppSettings] = [:]) -> Policy {
        var p = Policy(apps: apps, contacts: [Contact(handle: "alice@example.com", name: "Alice")])
        p.announce = Policy.Announce(headphones: true, carplay: true)
        return p
    }

    func testAnnouncementTexts() {
        let h = PipelineHarness(
            announcementPolicy([
                "com.example.chat": AppSettings(name: "Chat"),
                "com.example.cal": AppSettings(name: "Calendar"),
                "com.example.secret": AppSettings(previews: .never, name: "Secret"),
            ]),
            context: context("{\"audio\":\"headphones\"}"))
        XCTAssertEqual(
            h.decide(note("com.example.chat", body: "Lunch?", communication: message(from: "alice@example.com")))
                .announcement,
            "Alice says Lunch?")
        XCTAssertEqual(
            h.decide(
                note(
                    "com.example.chat", body: "Cake!",
                    communication: message(from: "bob@example.com", name: "Bob", group: "Family"))
            ).announcement,
            "Bob in Family says Cake!")
        XCTAssertEqual(
            h.decide(note("com.example.chat", communication: call(from: "alice@example.com"))).announcement,
            "Alice is calling")
        XCTAssertEqual(
            h.decide(note("com.example.cal", title: "Standup", body: "in 5 minutes", level: "time-sensitive"))
                .announcement,
            "Calendar: Standup, in 5 minutes")
        XCTAssertEqual(
            h.decide(note("com.example.cal", title: "Standup", body: nil, level: "time-sensitive")).announcement,
            "Calendar: Standup")
        XCTAssertNil(h.decide(note("com.example.cal", title: "FYI")).announcement)  // active, not communication
        XCTAssertEqual(
            h.decide(note("com.example.secret", level: "time-sensitive")).announcement, "Secret notification")
        XCTAssertEqual(
            h.decide(note("com.example.secret", communication: message(from: "alice@example.com"))).announcement,
            "Alice sent a message")
    }

    func testAnnouncementRoutesAndAppSettings() {
        let apps = [
            "com.example.podcast": AppSettings(announce: true, name: "Podcasts"),
            "com.example.bank": AppSettings(announce: false, name: "Bank"),
        ]
        let phones = PipelineHarness(announcementPolicy(apps), context: context("{\"audio\":\"headphones\"}"))
        XCTAssertEqual(
            phones.decide(note("com.example.podcast", title: "New episode", body: nil)).announcement,
            "Podcasts: New episode")
        XCTAssertNil(phones.decide(note("com.example.bank", level: "time-sensitive")).announcement)

        let car = PipelineHarness(announcementPolicy(apps), context: context("{\"audio\":\"carplay\"}"))
        XCTAssertEqual(
            car.decide(note("chat", body: "On my way", communication: message(from: "alice@example.com"))).announcement,
            "Alice says On my way")
        XCTAssertNil(car.decide(note("chat", communication: call(from: "alice@example.com"))).announcement)
        XCTAssertNil(car.decide(note("com.example.podcast", level: "time-sensitive")).announcement)

        let speaker = PipelineHarness(announcementPolicy(apps), context: context("{\"audio\":\"none\"}"))
        XCTAssertNil(speaker.decide(note("chat", communication: message(from: "alice@example.com"))).announcement)

        var off = announcementPolicy(apps)
        off.announce = Policy.Announce(headphones: false, carplay: true)
        XCTAssertNil(
            PipelineHarness(off, context: context("{\"audio\":\"headphones\"}"))
                .decide(note("chat", communication: message(from: "alice@example.com"))).announcement)
        // Only alerts are announced.
        XCTAssertNil(
            phones.decide(note("chat", level: "passive", communication: message(from: "alice@example.com")))
                .announcement)
    }
}
