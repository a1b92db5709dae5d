import XCTest

@testable import HushPolicy

/// The LuaCATS file lua-language-server reads must describe every host function and setting.
final class MetaFileTests: XCTestCase {
    var meta: String {
        get throws {
            let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("meta/hush.lua")
            return try String(contentsOf: url, encoding: .utf8)
        }
    }

    func testMetaFileIsALuaCATSMetaFile() throws {
        XCTAssertTrue(try meta.hasPrefix("---@meta"))
    }

    func testEveryDeclarationAndHelperIsDescribed() throws {
        let text = try meta
        for name in PolicyInterpreter.vocabulary where name != "hush" {
            XCTAssertTrue(text.contains("function \(name)("), "declaration \(name) missing from meta/hush.lua")
        }
        for helper in PolicyInterpreter.helperNames {
            XCTAssertTrue(text.contains("function hush.\(helper)("), "hush.\(helper) missing from meta/hush.lua")
        }
    }

    func testEverySettingAndViewFieldIsDescribed() throws {
        let text = try meta
        let keys =
            PolicyBuilder.appKeys + PolicyBuilder.categoryKeys + PolicyBuilder.focusKeys + PolicyBuilder.peopleKeys
            + PolicyBuilder.scheduleKeys + PolicyBuilder.contactKeys + PolicyBuilder.announceKeys
            + PolicyBuilder.summaryKeys
            + PolicyInterpreter.changeKeys + NotificationField.allCases.map(\.rawValue)
            + ContextField.allCases.map(\.rawValue)
        for key in Set(keys) {
            XCTAssertTrue(
                text.contains("---@field \(key) ") || text.contains("---@field \(key)? "),
                "'\(key)' has no ---@field in meta/hush.lua")
        }
    }
}
