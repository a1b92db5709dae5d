/// Everything a policy declares, as plain Swift values. The policy layer builds it from Lua; the
/// pipeline reads it. Rules themselves live in the policy layer (see `RuleRunning`).
package struct Policy: Sendable, Hashable {
    package struct Announce: Sendable, Hashable {
        package var headphones: Bool
        package var carplay: Bool
        package init(headphones: Bool = false, carplay: Bool = false) {
            self.headphones = headphones
            self.carplay = carplay
        }
    }

    /// Where a rule was declared, for traces and errors.
    package struct RuleInfo: Sendable, Hashable {
        package var name: String
        package var file: String
        package var line: Int
        package init(name: String, file: String, line: Int) {
            self.name = name
            self.file = file
            self.line = line
        }
        package var location: String { "\(file):\(line)" }
    }

    package var timezone: String?
    package var appDefaults: AppSettings
    package var apps: [String: AppSettings]
    package var categories: [String: CategorySettings]
    /// Local times of the scheduled summary, minutes after midnight, sorted.
    package var summaryTimes: [Int]
    package var contacts: [Contact]
    package var focuses: [FocusSettings]
    package var announce: Announce
    package var rules: [RuleInfo]

    package init(
        timezone: String? = nil, appDefaults: AppSettings = AppSettings(), apps: [String: AppSettings] = [:],
        categories: [String: CategorySettings] = [:], summaryTimes: [Int] = [], contacts: [Contact] = [],
        focuses: [FocusSettings] = [], announce: Announce = Announce(), rules: [RuleInfo] = []
    ) {
        self.timezone = timezone
        self.appDefaults = appDefaults
        self.apps = apps
        self.categories = categories
        self.summaryTimes = summaryTimes
        self.contacts = contacts
        self.focuses = focuses
        self.announce = announce
        self.rules = rules
    }

    /// An app's settings: its own block over `app "*"` over the defaults.
    package func settings(for app: String) -> ResolvedAppSettings {
        (apps[app] ?? AppSettings()).overriding(appDefaults).resolved(bundleID: app)
    }

    package func focus(named name: String) -> FocusSettings? { focusIndex(named: name).map { focuses[$0] } }

    /// Where the focus of this name is: the first of exactly that name, else the first whose name
    /// differs only in case.
    package func focusIndex(named name: String) -> Int? {
        focuses.firstIndex { $0.name == name } ?? focuses.firstIndex { $0.name.lowercased() == name.lowercased() }
    }

    /// Why `name` cannot be turned on, or nil when the policy declares a focus of exactly that name.
    /// Names match case included, so a file or the state never holds two spellings of one focus.
    package func undeclaredFocusProblem(_ name: String) -> String? {
        let names = focuses.map(\.name)
        if names.contains(name) { return nil }
        let problem = "the policy declares no focus named \"\(name)\""
        if names.isEmpty { return problem + "; it declares none" }
        if let near = Spelling.nearest(to: name, in: names) { return problem + " (did you mean \"\(near)\"?)" }
        return problem + "; it declares " + GroupSummary.joinList(names.map { "\"\($0)\"" })
    }
}
