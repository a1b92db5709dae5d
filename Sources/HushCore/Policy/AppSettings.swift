/// An app's settings (docs/reference.md, "Policy vocabulary"). Every field is optional so an app's own block can override
/// `app "*"` key by key; `resolved` fills in the defaults.
package struct AppSettings: Sendable, Hashable {
    package enum Authorization: String, Sendable, Hashable, CaseIterable { case authorized, provisional, denied }
    package enum DeliveryStyle: String, Sendable, Hashable, CaseIterable { case prominent, quiet }
    package enum Previews: String, Sendable, Hashable, CaseIterable { case always, unlocked, never }
    package enum Grouping: String, Sendable, Hashable, CaseIterable { case automatic, app, off }

    package var authorization: Authorization?
    package var criticalAlerts: Bool?
    package var timeSensitive: Bool?
    package var delivery: DeliveryStyle?
    package var sounds: Bool?
    package var badges: Bool?
    package var banners: Bool?
    package var lockScreen: Bool?
    package var previews: Previews?
    package var grouping: Grouping?
    package var summary: Bool?
    package var announce: Bool?
    package var name: String?

    package init(
        authorization: Authorization? = nil, criticalAlerts: Bool? = nil, timeSensitive: Bool? = nil,
        delivery: DeliveryStyle? = nil, sounds: Bool? = nil, badges: Bool? = nil, banners: Bool? = nil,
        lockScreen: Bool? = nil, previews: Previews? = nil, grouping: Grouping? = nil, summary: Bool? = nil,
        announce: Bool? = nil, name: String? = nil
    ) {
        self.authorization = authorization
        self.criticalAlerts = criticalAlerts
        self.timeSensitive = timeSensitive
        self.delivery = delivery
        self.sounds = sounds
        self.badges = badges
        self.banners = banners
        self.lockScreen = lockScreen
        self.previews = previews
        self.grouping = grouping
        self.summary = summary
        self.announce = announce
        self.name = name
    }

    /// These settings where set, else `fallback`'s.
    package func overriding(_ fallback: AppSettings) -> AppSettings {
        AppSettings(
            authorization: authorization ?? fallback.authorization,
            criticalAlerts: criticalAlerts ?? fallback.criticalAlerts,
            timeSensitive: timeSensitive ?? fallback.timeSensitive,
            delivery: delivery ?? fallback.delivery, sounds: sounds ?? fallback.sounds,
            badges: badges ?? fallback.badges, banners: banners ?? fallback.banners,
            lockScreen: lockScreen ?? fallback.lockScreen, previews: previews ?? fallback.previews,
            grouping: grouping ?? fallback.grouping, summary: summary ?? fallback.summary,
            announce: announce ?? fallback.announce, name: name ?? fallback.name)
    }

    /// With every default filled in (docs/reference.md, "App settings").
    package func resolved(bundleID: String) -> ResolvedAppSettings {
        ResolvedAppSettings(
            authorization: authorization ?? .authorized, criticalAlerts: criticalAlerts ?? false,
            timeSensitive: timeSensitive ?? true, delivery: delivery ?? .prominent, sounds: sounds ?? true,
            badges: badges ?? true, banners: banners ?? true, lockScreen: lockScreen ?? true,
            previews: previews ?? .always, grouping: grouping ?? .automatic, summary: summary ?? false,
            announce: announce, name: name ?? bundleID)
    }
}

/// An app's settings with defaults applied.
package struct ResolvedAppSettings: Sendable, Hashable {
    package var authorization: AppSettings.Authorization
    package var criticalAlerts: Bool
    package var timeSensitive: Bool
    package var delivery: AppSettings.DeliveryStyle
    package var sounds: Bool
    package var badges: Bool
    package var banners: Bool
    package var lockScreen: Bool
    package var previews: AppSettings.Previews
    package var grouping: AppSettings.Grouping
    package var summary: Bool
    /// nil: the defaults (docs/reference.md, "Announcement").
    package var announce: Bool?
    package var name: String

    /// Whether previews are hidden (`never`, or `unlocked` while the device is locked): then no
    /// title, body or name is shown, only a placeholder.
    package func hidesPreviews(locked: Bool) -> Bool {
        previews == .never || (previews == .unlocked && locked)
    }
}
