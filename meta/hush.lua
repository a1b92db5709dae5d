---@meta hush
-- meta/hush.lua: the Hush policy API (docs/reference.md, "Policy vocabulary") for lua-language-server, in LuaCATS annotations.
-- Nothing here runs: Hush defines these functions itself. `.luarc.json` at the top of the
-- repository points the language server here, for completion, hover docs and type checks in
-- policies (`*.lua`) and policy tests (`*_test.lua`).

-------------------------------------------------------------------------------------------------
-- Words
-------------------------------------------------------------------------------------------------

---An interruption level (Apple's table): passive never sounds or breaks through; active sounds;
---time-sensitive also breaks through the Scheduled Summary and Focus (where allowed); critical
---breaks through everything, the ringer switch included.
---@alias HushLevel
---| "passive"
---| "active"
---| "time-sensitive"
---| "critical"

---What happens to a notification.
---@alias HushDelivery
---| "alert"      # interrupts now
---| "quiet"      # in the list now: no sound, banner or screen wake
---| "summary"    # held for the next Scheduled Summary
---| "silenced"   # in the list now, silently, because a Focus silences it
---| "dropped"    # not shown
---| "background" # no user-visible notification (a background push, or nothing to show)
---| "withdrawn"  # a withdraw line: the app removed a notification it sent earlier

---What let a notification past the active Focus or the Scheduled Summary.
---@alias HushBreakthrough
---| "critical"
---| "time-sensitive"
---| "person"
---| "app"
---| "call"
---| "repeated-call"
---| "communication"
---| "rule"

---A day name or a set of days: "mon-fri", "sat,sun", "daily", "weekdays", "weekends", "mon".
---@alias HushDays string|string[]

---A count-dependent format: `%u` is the count, `%@` the summary arguments, `%%` a percent sign.
---A plain string is used for every count.
---@alias HushFormat string|HushPluralFormat

-------------------------------------------------------------------------------------------------
-- Declarations
-------------------------------------------------------------------------------------------------

---The time zone of schedules and summary times, an IANA name. Default: the machine's. A context's
---`timezone` overrides it for one evaluation. Declare it once.
---
---```lua
---timezone "Europe/Berlin"
---```
---@param name string an IANA time zone name such as "Europe/Berlin"
function timezone(name) end

---Settings for one app, by bundle id, or for every app with `"*"`. An app's own block overrides
---`app "*"` key by key; declaring the same app twice merges the blocks, the later key winning.
---
---```lua
---app "com.example.news" { summary = true, time_sensitive = false, name = "News" }
---```
---@param bundle_id string the app's bundle id, or "*" for the defaults of every app
---@return fun(settings: HushAppSettings)
function app(bundle_id) end

---Settings for a notification category (`aps.category`): the summary line under its groups and
---the placeholder shown when previews are hidden.
---
---```lua
---category "MESSAGE" { summary_format = { one = "%u more message from %@", other = "%u more messages from %@" },
---                     hidden_preview = "%u messages" }
---```
---@param identifier string the category identifier, as in `aps.category`
---@return fun(settings: HushCategorySettings)
function category(identifier) end

---The Scheduled Summary: when held notifications are delivered. Apps join it with
---`app "…" { summary = true }`. Declare it once.
---
---```lua
---summary { at = { "08:00", "18:00" } }
---```
---@param settings HushSummarySettings
function summary(settings) end

---A person the policy knows: their name, whether they are a favorite, and the other handles
---(aliases) that are the same person.
---
---```lua
---contact { handle = "alice@example.com", name = "Alice", favorite = true, aliases = { "+1 617 555 1212" } }
---```
---@param settings HushContactSettings
function contact(settings) end

---A Focus: when it turns itself on, and who and what gets through while it is on. A focus may also
---be turned on by hand (the context's `focus`). Several scheduled focuses on at once: the first
---declared wins.
---
---```lua
---focus "Work" {
---  schedule = { days = "mon-fri", from = "09:00", to = "17:30" },
---  people = { "alice@example.com", favorites = true, suggested = 3 },
---  apps = { "com.example.mail" },
---}
---```
---@param name string the focus name, as the context's `focus` and decisions name it
---@return fun(settings: HushFocusSettings)
function focus(name) end

---Siri announcements: where notifications may be read aloud. Both off unless turned on here.
---Declare it once.
---
---```lua
---announce { headphones = true, carplay = true }
---```
---@param settings HushAnnounceSettings
function announce(settings) end

---A rule: runs for every notification, in declaration order, before the built-in pipeline. It
---returns nil (no change) or a table of changes; later rules see earlier changes. An error in a
---rule is recorded in the decision's `errors` and that rule's changes are ignored.
---
---```lua
---rule("pages mentioning SEV1 are critical", function(n, ctx)
---  if n.app == "com.example.pager" and n.body:find("SEV1") then
---    return { level = "critical", reason = "SEV1 page" }
---  end
---end)
---```
---@param name string what the rule does; decisions list it in `rules` when it changed something
---@param fn fun(n: HushNotification, ctx: HushContext): HushChanges?
function rule(name, fn) end

-------------------------------------------------------------------------------------------------
-- Settings tables
-------------------------------------------------------------------------------------------------

---@class HushAppSettings
---`authorized` (default); `provisional`: delivered quietly at most; `denied`: dropped. A critical
---notification from an app with `critical_alerts` gets through either way.
---@field authorization? "authorized"|"provisional"|"denied"
---May the app send critical alerts (a separate permission)? Default false: critical becomes active.
---@field critical_alerts? boolean
---May the app send time-sensitive notifications? Default true; false: they become active.
---@field time_sensitive? boolean
---`prominent` (default): alerts; `quiet`: straight to the list, no sound or banner (critical aside).
---@field delivery? "prominent"|"quiet"
---Sounds allowed. Default true (critical alerts always sound).
---@field sounds? boolean
---Badges allowed. Default true.
---@field badges? boolean
---Banners while unlocked. Default true.
---@field banners? boolean
---Shown on the lock screen while locked. Default true.
---@field lock_screen? boolean
---Show previews `always` (default), only while `unlocked`, or `never`; hidden: a placeholder.
---@field previews? "always"|"unlocked"|"never"
---`automatic` (default): by app and `thread-id`; `app`: one group per app; `off`: no groups.
---@field grouping? "automatic"|"app"|"off"
---Hold the app's notifications for the Scheduled Summary. Default false.
---@field summary? boolean
---Siri announcements: true announces any of its alerts in headphones, false never; unset: the
---defaults (communication and time-sensitive in headphones, messages on CarPlay).
---@field announce? boolean
---The name Siri says and reasons use. Default: the bundle id.
---@field name? string

---@class HushPluralFormat
---The form for a count of 1. Default: `other`.
---@field one? string
---The form for every other count.
---@field other string

---@class HushCategorySettings
---The summary line under a group, speaking of its *other* notifications: `%u` = the sum of their
---`summary-arg-count` (default 1 each), `%@` = their `summary-arg`s joined "A, B and C".
---Default: "%u more notification" / "%u more notifications".
---@field summary_format? HushFormat
---The placeholder shown instead of the text when previews are hidden; `%u` = the group's count.
---Default: "Notification".
---@field hidden_preview? HushFormat

---@class HushSummarySettings
---Summary times, 24-hour "HH:MM" in the policy's time zone, e.g. { "08:00", "18:00" }.
---@field at string[]

---@class HushContactSettings
---An e-mail address, a phone number, or an app's user id. Required.
---@field handle string
---The name announcements and reasons use.
---@field name? string
---A favorite: gets through a focus with `people = { favorites = true }`. Default false.
---@field favorite? boolean
---Other handles of the same person (phone numbers, other addresses).
---@field aliases? string[]

---@class HushSchedule
---The days the window starts on: "mon-fri", "sat,sun", "daily", or a list such as { "mon", "wed" }.
---Default: every day.
---@field days? HushDays
---Start, 24-hour "HH:MM", inclusive.
---@field from string
---End, 24-hour "HH:MM", exclusive; at or before `from` it wraps past midnight.
---@field to string

---Handles of allowed people (the array part), plus two keys.
---@class HushFocusPeople
---@field [integer] string
---Every favorite contact gets through. Default false.
---@field favorites? boolean
---The top N suggested people (from donated interactions, docs/reference.md, "People and suggestions") get through, 0 to 100. Default 0.
---@field suggested? integer

---@class HushFocusSettings
---When the focus turns itself on: one schedule or a list of them. None: only by hand.
---@field schedule? HushSchedule|HushSchedule[]
---Allowed people (`mode = "allow"`) or silenced people (`mode = "silence"`).
---@field people? HushFocusPeople|string[]|string
---Allowed apps (`mode = "allow"`) or silenced apps (`mode = "silence"`), by bundle id.
---@field apps? string[]|string
---Who may call through: `everyone`, `allowed` (default: the allowed people), `favorites`,
---`contacts`, `nobody`.
---@field calls? "everyone"|"allowed"|"favorites"|"contacts"|"nobody"
---A second call from the same person within 3 minutes rings. Default true.
---@field repeated_calls? boolean
---Time-sensitive notifications break through. Default true.
---@field time_sensitive? boolean
---`always` (default), or `locked`: silences only while the device is locked.
---@field silence? "always"|"locked"
---`allow` (default): only the listed people and apps get through; `silence`: the listed ones are
---silenced and everyone else gets through.
---@field mode? "allow"|"silence"
---Focus filters: per bundle id, the `aps.filter-criteria` values that may get through; anything
---else from that app is silenced (critical aside). Notifications without criteria are not affected.
---@field filters? table<string, string[]|string>

---@class HushAnnounceSettings
---Announce in headphones. Default false.
---@field headphones? boolean
---Announce on CarPlay (messages only). Default false.
---@field carplay? boolean

-------------------------------------------------------------------------------------------------
-- What a rule sees: n and ctx (read-only views)
-------------------------------------------------------------------------------------------------

---@class HushPerson
---e-mail, phone number or app user id
---@field handle? string
---@field name? string
---address-book id
---@field contact? string
---@field aliases string[]

---@class HushCommunication
---@field kind "message"|"call"
---@field sender? HushPerson
---@field recipients HushPerson[]
---the speakable group name, for a group conversation
---@field group? string
---the conversation id
---@field conversation? string
---@field service? string

---@class HushAttachment
---@field type "image"|"audio"|"video"|"file"

---The notification a rule decides (read-only; writing to it is an error).
---@class HushNotification
---The request identifier (`id`, else `apns-collapse-id`, else one Hush made).
---@field id string
---The sending app's bundle id.
---@field app string
---Whose device this is ("default" unless the input names a user).
---@field user string
---Arrival time, UNIX seconds.
---@field date number
---`aps.alert.title`; "" when absent.
---@field title string
---`aps.alert.subtitle`; "" when absent.
---@field subtitle string
---`aps.alert.body` (or `aps.alert` as a string); "" when absent.
---@field body string
---`aps.category`, or nil.
---@field category? string
---The thread (`aps.thread-id`, or what an earlier rule set), or nil.
---@field thread? string
---The level as it stands (the payload's, or what an earlier rule set).
---@field level HushLevel
---The level the payload asked for.
---@field requested_level HushLevel
---`aps.relevance-score` (0…1) or what an earlier rule set, or nil.
---@field relevance? number
---`aps.badge`, or nil.
---@field badge? integer
---The sound's name ("default" for a sound without one), or nil for no sound.
---@field sound? string
---Whether `aps.sound` is a critical sound (`critical: 1`).
---@field critical boolean
---The SiriKit intent of a communication notification, or nil.
---@field communication? HushCommunication
---Media attachments.
---@field attachments HushAttachment[]
---`aps.filter-criteria`, or nil.
---@field filter_criteria? string
---The APNs headers (`apns-push-type`, `apns-priority`, `apns-collapse-id`, `apns-expiration`).
---@field headers table<string, any>
---The raw payload: `aps` plus the app's custom keys.
---@field payload table<string, any>

---Local time fields, as Lua's `os.date("*t")`.
---@class HushTime
---@field year integer
---@field month integer 1…12
---@field day integer 1…31
---@field hour integer 0…23
---@field min integer 0…59
---@field sec integer 0…59
---@field wday integer 1 = Sunday … 7 = Saturday

---The device's state (read-only).
---@class HushContext
---Now, UNIX seconds.
---@field now number
---Now in local time (the context's time zone, else the policy's).
---@field time HushTime
---The active focus's name, or nil.
---@field focus? string
---Whether the device is locked.
---@field locked boolean
---@field ringer "ring"|"silent"
---@field audio "none"|"headphones"|"carplay"
---Whose device this is.
---@field user string

---What a rule may return: every key optional, nil means "no change".
---@class HushChanges
---Set the interruption level (no app entitlement needed for the user's own rule).
---@field level? HushLevel
---Force the outcome.
---@field delivery? HushDelivery
---true: passes the active focus like an allowed app.
---@field allow? boolean
---false: never held for the Scheduled Summary; true: held.
---@field summary? boolean
---Announce (true) or not (false), over the app's setting.
---@field announce? boolean
---The relevance used to order a summary, 0…1.
---@field relevance? number
---The thread (and so the group with `grouping = "automatic"`).
---@field thread? string
---A short sentence for the decision's reasons.
---@field reason? string

-------------------------------------------------------------------------------------------------
-- hush.*: helpers for rules
-------------------------------------------------------------------------------------------------

---@class HushContact
---@field handle string
---@field name? string
---@field favorite boolean
---@field aliases string[]

---@class HushSuggestion: HushPerson
---The person's score: Σ weight × 0.5^(age in days / 14) over outgoing interactions.
---@field score number

---@class HushRecentOptions
---Only this app's notifications.
---@field app? string
---Only those whose communication sender has this handle.
---@field sender? string
---Only this thread.
---@field thread? string
---How far back, in minutes. Default 60.
---@field minutes? number

---@class HushInteractionsOptions
---Only interactions with this person (a handle or a person table; aliases count).
---@field person? string|HushPerson
---How far back, in days. Default 90.
---@field days? number
---Only `outgoing` or `incoming` ones.
---@field direction? "outgoing"|"incoming"

---Helpers rules may call. They read the policy's contacts and Hush's state; they change nothing.
---@class HushHelpers
hush = {}

---The policy's contact for a handle or person (aliases count), or nil.
---@param handle string|HushPerson
---@return HushContact?
function hush.contact(handle) end

---Whether the person (a handle or a person table) is a favorite contact.
---@param person string|HushPerson
---@return boolean
function hush.is_favorite(person) end

---How many notifications arrived in the last `minutes` (default 60), by app, sender and thread.
---The notification being decided is not counted.
---@param options? HushRecentOptions
---@return integer
function hush.recent(options) end

---How many donated interactions (docs/reference.md, "People and suggestions") there were in the last `days` (default 90), with a
---person and in a direction.
---@param options? HushInteractionsOptions
---@return integer
function hush.interactions(options) end

---The top `n` (default 5) suggested people for the active focus, best first.
---@param n? integer
---@return HushSuggestion[]
function hush.suggested(n) end

---Adds a line to the trace (`hush eval --explain`). `print` does the same.
---@param text string|number|boolean
function hush.note(text) end

-------------------------------------------------------------------------------------------------
-- Policy tests (*_test.lua): run with `hush test policies`
-------------------------------------------------------------------------------------------------

---In a test's `expect`: the field must be null. (In a test's input: a JSON null.)
---@type any
null = nil

---A context, as in a `--context` file (docs/reference.md, "Context").
---@class HushTestContext
---RFC 3339; default: the notification's `date`.
---@field now? string
---IANA name; default: the policy's.
---@field timezone? string
---A focus name turns it on by hand; false or "off" turns every focus off; absent: schedules decide.
---@field focus? string|false
---Default true.
---@field locked? boolean
---Default "ring".
---@field ringer? "ring"|"silent"
---Default "none".
---@field audio? "none"|"headphones"|"carplay"

---A notification envelope (docs/reference.md, "Input"), as in `hush eval` input.
---@class HushTestNotification
---The sending app's bundle id. Required.
---@field app string
---The request identifier; default: `headers["apns-collapse-id"]`, else one Hush makes.
---@field id? string
---Arrival time, RFC 3339; default: the context's `now`.
---@field date? string
---Whose device; default "default".
---@field user? string
---APNs headers: `apns-collapse-id`, `apns-push-type`, `apns-priority`, `apns-expiration`.
---@field headers? table<string, any>
---The APNs payload: `aps` plus custom keys. Required.
---@field payload table<string, any>
---The SiriKit intent: `kind`, `sender`, `recipients`, `group`, `conversation`, `service`.
---@field communication? table<string, any>
---Media attachments: { { type = "image" } }.
---@field attachments? HushAttachment[]

---@class HushExpectAlert
---@field sound? boolean
---@field sound_name? string
---@field volume? number
---@field vibrate? boolean
---@field wake_screen? boolean
---@field banner? boolean
---@field lock_screen? boolean
---@field bypass_ringer? boolean

---@class HushExpectGroup
---@field id? string
---@field count? integer
---@field summary? string

---Decision fields to compare (docs/reference.md, "Decision"); unlisted ones are ignored, `null` means "must be null".
---@class HushExpect
---@field delivery? HushDelivery
---@field level? HushLevel
---@field requested_level? HushLevel
---@field focus? string
---@field breakthrough? HushBreakthrough
---@field alert? HushExpectAlert
---@field badge? integer
---@field announcement? string
---@field group? HushExpectGroup
---@field placeholder? string
---RFC 3339 in the context's time zone, e.g. "2026-11-28T18:00:00+01:00".
---@field summary_at? string
---@field replaces? string
---The exact list of rules that changed something.
---@field rules? string[]
---The exact list of errors.
---@field errors? string[]
---@field reasons? string[]

---@class HushTestSpec
---The device's state; default: locked, ringer on, no audio, schedules decide.
---@field context? HushTestContext
---Notifications decided first, in order, in the same fresh state.
---@field before? HushTestNotification[]
---The notification under test.
---@field notification HushTestNotification
---The decision fields it must have.
---@field expect HushExpect

---A policy test: decides `spec.notification` with the policy of the same name (work_test.lua
---tests work.lua) in a fresh state, and compares the fields in `spec.expect`. `spec` may be a
---function returning the table: an error in it then fails only this test.
---@param name string what the test shows, printed when it fails
---@param spec HushTestSpec|fun(): HushTestSpec
function test(name, spec) end

---Tests another policy than the file of the same name: paths relative to the test file.
---@param ... string
function policy(...) end
