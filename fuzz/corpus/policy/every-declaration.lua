timezone "UTC"
app "*" { grouping = "app", sounds = false, badges = true, banners = true, lock_screen = false, previews = "never" }
app "x" { authorization = "provisional", critical_alerts = true, time_sensitive = false, delivery = "quiet", summary = true, announce = false, name = "X" }
category "C" { summary_format = { one = "%u %@", other = "%u %@s %%" }, hidden_preview = "%u" }
summary { at = { "00:00", "23:59", "12:00" } }
contact { handle = "a@b.c", name = "A", favorite = true, aliases = { "+1 2", "tel:3" } }
announce { headphones = false, carplay = true }
focus "F" { schedule = { { days = "fri-mon", from = "22:00", to = "06:00" }, { days = { "mon", "wed" }, from = "10:00", to = "10:00" } },
  people = { "a@b.c", favorites = true, suggested = 100 }, apps = { "x" }, calls = "everyone", repeated_calls = false,
  time_sensitive = false, silence = "locked", mode = "silence", filters = { x = { "a", "b" } } }
rule("r", function(n, ctx) return { level = "passive", relevance = 0, thread = n.id, reason = ctx.user } end)
rule("bad", function(n, ctx) return { nope = 1 } end)
rule("err", function(n, ctx) error({}) end)
