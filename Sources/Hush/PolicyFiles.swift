import Foundation
package import HushPolicy

/// Finds and reads policy files: files as given, directories by their `*.lua` files (tests,
/// `*_test.lua`, left out), in name order.
package enum PolicyFiles {
    package struct ReadError: Error, Sendable, CustomStringConvertible {
        package var path: String
        package var message: String
        package var description: String { "\(path): \(message)" }
    }

    package static func sources(paths: [String]) throws(ReadError) -> [PolicySource] {
        var out: [PolicySource] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw ReadError(path: path, message: "no such file or directory")
            }
            if isDirectory.boolValue {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
                let files = names.filter { $0.hasSuffix(".lua") && !$0.hasSuffix("_test.lua") && !$0.hasPrefix(".") }
                    .sorted()
                if files.isEmpty { throw ReadError(path: path, message: "the directory has no .lua policy files") }
                for name in files { out.append(try read((path as NSString).appendingPathComponent(name))) }
            } else {
                out.append(try read(path))
            }
        }
        return out
    }

    static func read(_ path: String) throws(ReadError) -> PolicySource {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ReadError(path: path, message: "cannot be read")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ReadError(path: path, message: "is not UTF-8 text")
        }
        return PolicySource(name: path, text: text)
    }

    /// `$XDG_CONFIG_HOME/hush/policy.lua`, else `~/.config/hush/policy.lua`, when it exists.
    package static func userPolicyPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        let base: String
        if let xdg = environment["XDG_CONFIG_HOME"], !xdg.isEmpty {
            base = xdg
        } else if let home = environment["HOME"] {
            base = home + "/.config"
        } else {
            return nil
        }
        let path = base + "/hush/policy.lua"
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }
}
