/// Everything a policy declares, as plain Swift values. The policy layer builds it from Lua; the
/// pipeline reads it. Rules themselves live in the policy layer (see `RuleRunning`).
public struct Policy: Sendable, Hashable {
    public struct Announce: Sendable, Hashable {
        public var headphones: Bool
        public var carplay: Bool
        public init(headphones: Bool = false, carplay: Bool = false) {
            self.headphones = headphones
            self.carplay = carplay
        }
    }

    /// Where a rule was declared, for traces and errors.
    public struct RuleInfo: Sendable, Hashable {
        public var name: String
        public var file: String
        public var line: Int
        public init(name: String, file: String, line: Int) {
            self.name = name
            self.file = file
            self.line = line
        }
        public var location: String { "\(file):\(line)" }
    }

    public var timezone: String?
    public var appDefaults: AppSettings
    public var apps: [String: AppSettings]
    public var categories: [String: CategorySettings]
    /// Local times of the scheduled summary, minutes after midnight, sorted.
    public var summaryTimes: [Int]
    public var contacts: [Contact]
    public var focuses: [FocusSettings]
    public var announce: Announce
    public var rules: [RuleInfo]

    public init(timezone: String? = nil, appDefaults: AppSettings = AppSettings(), apps: [String: AppSettings] = [:],
                categories: [String: CategorySettings] = [:], summaryTimes: [Int] = [], contacts: [Contact] = [],
                focuses: [FocusSettings] = [], announce: Announce = Announce(), rules: [RuleInfo] = []) {
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
    public func settings(for app: String) -> ResolvedAppSettings {
        (apps[app] ?? AppSettings()).overriding(appDefaults).resolved(bundleID: app)
    }

    public func focus(named name: String) -> FocusSettings? {
        focuses.first { $0.name == name } ?? focuses.first { $0.name.lowercased() == name.lowercased() }
    }

    /// Why `name` cannot be turned on, or nil when the policy declares a focus of exactly that name.
    /// Names match case included, so a file or the state never holds two spellings of one focus.
    public func undeclaredFocusProblem(_ name: String) -> String? {
        let names = focuses.map(\.name)
        if names.contains(name) { return nil }
        let problem = "the policy declares no focus named \"\(name)\""
        if names.isEmpty { return problem + "; it declares none" }
        if let near = Spelling.nearest(to: name, in: names) { return problem + " (did you mean \"\(near)\"?)" }
        return problem + "; it declares " + GroupSummary.joinList(names.map { "\"\($0)\"" })
    }
}
