#!/usr/bin/env python3
"""Writes examples/week.jsonl: one week of Sam's notifications, for policies/week.lua.

Monday 23 to Sunday 29 November 2026, Europe/Berlin (+01:00), user "sam", the people and apps of
examples/README.md. Weekdays: news and podcasts in the morning, work mail, calendar reminders and
Team chat bursts (Bob, Erin, Grace, Alice; Frank @-mentions Sam now and then), the Climbing crew
and Dan chatting at lunch and in the evening, Carol and the bank through the day, a few calls,
sign-in codes, background mail syncs, a denied game and a provisional recipes app. The story:
  - Monday night, a stranger's number calls twice at 02:10 (the call centre);
  - Tuesday: parcel-88 out for delivery then delivered (same apns-collapse-id); a storm on the
    coast, and at 23:40 Mum calls from Hamburg, twice within two minutes;
  - Wednesday is on call: a SEV3 payments page in the afternoon, then at 03:12 on Thursday a SEV1
    (critical sound), Erin calling twice for the bridge, updates until it is resolved;
  - Thursday: the post-incident review; at midnight the Black Friday deals start;
  - Friday: Black Friday (a flood of deals, one flash sale already expired), drinks after work, the
    Climbing crew chatting past midnight;
  - Saturday: climbing, order #5521 arrives, a message from Bob; the call centre again at 23:40;
  - Sunday: quiet; Mum calls in the afternoon, Monday's calendar and work mail arrive in the evening.
One message is withdrawn (a group message unsent a minute later).

Deterministic (fixed seed, no third-party modules). Regenerate with:

    python3 scripts/make-week-stream.py > examples/week.jsonl
"""

import json
import random
import sys
from datetime import datetime, timedelta, timezone

rng = random.Random(20261123)
TZ = timezone(timedelta(hours=1))
MONDAY = datetime(2026, 11, 23, tzinfo=TZ)
USER = "sam"

ME = {"handle": "me@example.com", "name": "Sam Rivera"}
PEOPLE = {
    "alice": {"handle": "alice@example.com", "name": "Alice Doe"},
    "bob": {"handle": "bob@example.com", "name": "Bob Martin"},
    "erin": {"handle": "erin@example.com", "name": "Erin Park"},
    "grace": {"handle": "grace@example.com", "name": "Grace Liu"},
    "carol": {"handle": "carol@example.com", "name": "Carol Doe"},
    "dan": {"handle": "dan@example.com", "name": "Dan Weber"},
    "frank": {"handle": "frank@example.com", "name": "Frank Ortiz"},
}
PHONES = {
    "alice": "+1 617 555 1212",
    "bob": "+49 30 5550 1000",
    "erin": "+49 170 5550 0404",
    "carol": "+49 151 5550 0101",
    "mum": "+49 40 5550 0202",
    "dan": "+49 176 5550 0303",
    "callcentre": "+49 30 5550 9999",
}
CALLER_NAMES = {"alice": "Alice Doe", "bob": "Bob Martin", "erin": "Erin Park", "carol": "Carol Doe",
                "mum": "Mum", "dan": "Dan Weber"}
GROUPS = {
    "team": ("Team", ["bob", "erin", "alice", "grace"]),
    "climbing-crew": ("Climbing crew", ["alice", "dan", "carol"]),
}

events = []   # (datetime, sequence, envelope)
counter = {}


def at(day, hhmm, jitter=0):
    """The moment `hhmm` on day `day` (0 = Monday), moved by up to `jitter` minutes either way."""
    h, m = map(int, hhmm.split(":"))
    t = MONDAY + timedelta(days=day, hours=h, minutes=m)
    if jitter:
        t += timedelta(minutes=rng.randint(-jitter, jitter))
    return t.replace(second=0)


def emit(t, env):
    """Adds one line at time t. Lines without an id get one after sorting: "wed-017" is the 17th of Wednesday."""
    events.append((t, len(events), env))
    return env


def first(name):
    return name.split()[0]


def dm(t, who, body, badge=1):
    p = PEOPLE[who]
    return emit(t, {"app": "com.example.chat", "payload": {"aps": {
        "alert": {"title": p["name"], "body": body, "summary-arg": first(p["name"])},
        "sound": "default", "thread-id": who, "category": "MESSAGE", "mutable-content": 1, "badge": badge}},
        "communication": {"kind": "message", "sender": dict(p), "recipients": [ME], "conversation": who,
                          "service": "Chat"}})


def group_msg(t, thread, who, body, mentioned=False):
    name, members = GROUPS[thread]
    p = PEOPLE[who]
    others = [dict(PEOPLE[m]) for m in members if m != who]
    payload = {"aps": {"alert": {"title": name, "subtitle": p["name"], "body": body,
                                 "summary-arg": first(p["name"])},
                       "sound": "default", "thread-id": thread, "category": "MESSAGE", "mutable-content": 1}}
    if mentioned:
        payload["mentioned"] = True
    return emit(t, {"app": "com.example.chat", "payload": payload,
                    "communication": {"kind": "message", "sender": dict(p), "recipients": [ME] + others,
                                      "conversation": thread, "service": "Chat", "group": name}})


def burst(t, thread, lines, gap=(1, 3)):
    """A conversation: (who, body) pairs a minute or three apart. Returns the time after it."""
    for who, body in lines:
        group_msg(t, thread, who, body, mentioned=body.startswith("@Sam"))
        t += timedelta(minutes=rng.randint(*gap))
    return t


def call(t, who):
    number = PHONES[who]
    sender = {"handle": number}
    if who in CALLER_NAMES:
        sender["name"] = CALLER_NAMES[who]
    return emit(t, {"app": "com.example.phone", "headers": {"apns-push-type": "alert", "apns-priority": 10},
                    "payload": {"aps": {"alert": {"title": CALLER_NAMES.get(who, number), "body": "Incoming call"},
                                        "sound": "ringtone.caf", "category": "INCOMING_CALL"}},
                    "communication": {"kind": "call", "sender": sender, "recipients": [ME], "service": "Phone"}})


def mail(t, sender, name, subject, body, criteria="work", thread=None, badge=None):
    aps = {"alert": {"title": name, "subtitle": subject, "body": body}, "category": "MAIL",
           "filter-criteria": criteria, "thread-id": thread or subject.lower().replace(" ", "-")[:40]}
    if criteria == "work" or sender.endswith("@example.com"):
        aps["sound"] = "default"
    if badge:
        aps["badge"] = badge
    return emit(t, {"app": "com.example.mail", "payload": {"aps": aps, "from": sender}})


def mail_sync(t, new):
    return emit(t, {"app": "com.example.mail", "headers": {"apns-push-type": "background", "apns-priority": 5},
                    "payload": {"aps": {"content-available": 1}, "mailbox": "INBOX", "new": new}})


def mail_badge(t, badge):
    return emit(t, {"app": "com.example.mail", "payload": {"aps": {"badge": badge}}})


def calendar(t, title, body, level="time-sensitive", relevance=0.8):
    aps = {"alert": {"title": title, "body": body}, "category": "EVENT_REMINDER", "interruption-level": level}
    if level != "passive":
        aps["sound"] = "default"
        aps["relevance-score"] = relevance
    return emit(t, {"app": "com.example.calendar", "payload": {"aps": aps}})


def news(t, title, body, thread, relevance, level=None):
    aps = {"alert": {"title": title, "body": body, "summary-arg": title}, "thread-id": thread,
           "category": "NEWS", "relevance-score": relevance}
    if level:
        aps["interruption-level"] = level
    return emit(t, {"app": "com.example.news", "payload": {"aps": aps}})


def episode(t, show, title, relevance=None, image=True):
    aps = {"alert": {"title": show, "body": "New episode: " + title, "summary-arg": show}, "category": "NEW_EPISODE"}
    if relevance is not None:
        aps["relevance-score"] = relevance
    env = {"app": "com.example.podcasts", "payload": {"aps": aps, "show": show}}
    if image:
        env["attachments"] = [{"type": "image"}]
    return emit(t, env)


def deal(t, title, body, relevance=0.2, expires=None, thread=None):
    aps = {"alert": {"title": title, "body": body, "summary-arg": "Deals"}, "category": "DEAL",
           "relevance-score": relevance}
    if thread:
        aps["thread-id"] = thread
    env = {"app": "com.example.shop", "payload": {"aps": aps}}
    if expires is not None:
        env["headers"] = {"apns-expiration": int(expires.timestamp())}
    return emit(t, env)


def order_today(t, order, window):
    return emit(t, {"app": "com.example.shop", "payload": {"aps": {
        "alert": {"title": "Arriving today", "body": "Your order #%s arrives between %s" % (order, window)},
        "sound": "default", "category": "DELIVERY_TODAY", "thread-id": "order-" + order}}})


def parcel(t, key, title, body):
    return emit(t, {"app": "com.example.parcel", "id": "%s-%s" % (key, title.lower().replace(" ", "-")),
                    "headers": {"apns-collapse-id": key},
                    "payload": {"aps": {"alert": {"title": title, "body": body}, "sound": "default",
                                        "thread-id": key, "category": "SHIPMENT"}}})


def card(t, amount, where):
    return emit(t, {"app": "com.example.bank", "payload": {"aps": {
        "alert": {"title": "Card payment", "body": "%s EUR at %s" % (amount, where)}, "sound": "default",
        "thread-id": "card", "category": "TRANSACTION"}}})


def bank_security(t, body):
    return emit(t, {"app": "com.example.bank", "payload": {"aps": {
        "alert": {"title": "New sign-in", "body": body}, "sound": "default", "category": "SECURITY",
        "interruption-level": "time-sensitive"}}})


def code(t, service):
    return emit(t, {"app": "com.example.auth", "payload": {"aps": {
        "alert": {"title": "Sign-in code", "body": "%s: your code is %06d. It expires in 5 minutes."
                  % (service, rng.randint(0, 999999))},
        "sound": "default", "interruption-level": "time-sensitive", "category": "OTP"}}})


def page(t, service, body, incident, criteria, critical=False, level=None):
    aps = {"alert": {"title": service, "body": body}, "category": "PAGE", "thread-id": criteria,
           "filter-criteria": criteria}
    if critical:
        aps["sound"] = {"critical": 1, "name": "siren.caf", "volume": 0.8}
        aps["interruption-level"] = "critical"
    else:
        aps["sound"] = "default"
        if level:
            aps["interruption-level"] = level
    return emit(t, {"app": "com.example.pager", "payload": {"aps": aps, "incident": incident}})


def recipe(t, body):
    return emit(t, {"app": "com.example.trial", "payload": {"aps": {
        "alert": {"title": "Recipe of the day", "body": body}, "sound": "default"}}})


def game(t, body):
    return emit(t, {"app": "com.example.game", "payload": {"aps": {
        "alert": {"title": "Your energy is full!", "body": body}, "sound": "default", "badge": 1}}})


# ---------------------------------------------------------------------------------------------
# What people say. Lists indexed by day (0 = Monday) follow the week's story.

TEAM_MORNING = [
    [("bob", "Standup in 5, same room"), ("erin", "omw"), ("grace", "running 2 min late"),
     ("alice", "I'll share the board")],
    [("erin", "Deploy train leaves at 10:30, anything to add?"), ("grace", "my PR for the retry fix"),
     ("bob", "go for it"), ("erin", "added")],
    [("grace", "Who has the staging credentials?"), ("alice", "in the vault, under payments"),
     ("grace", "found them, thanks")],
    [("bob", "Morning. Review of last night's incident at 11:00"), ("alice", "I'll take notes"),
     ("erin", "timeline is in the doc"), ("grace", "coffee first")],
    [("alice", "Coffee?"), ("erin", "yes"), ("grace", "2 min"), ("bob", "bring me one"),
     ("alice", "flat white for Bob, noted")],
]
TEAM_AFTERNOON = [
    [("erin", "CI is red on main"), ("grace", "flaky test again, rerunning"), ("erin", "green now")],
    [("alice", "Design review moved to 15:00"), ("bob", "works for me"), ("grace", "👍")],
    [("grace", "Search latency graph looks odd"), ("erin", "indexer restart at 14:00, should settle"),
     ("grace", "ok, watching it"), ("erin", "settled")],
    [("bob", "Action items from the review are in Tracker"), ("erin", "took the retry budget one"),
     ("alice", "I'll do the alert thresholds"), ("bob", "thanks both")],
    [("erin", "Release notes draft is in the doc"), ("alice", "left two comments"),
     ("erin", "fixed"), ("bob", "ship it")],
]
# (time, who, text): colleagues writing to Sam directly during Work.
COLLEAGUE_DM = [
    [("10:40", "bob", "Got 10 minutes after lunch?"), ("15:20", "grace", "Left you a comment on the PR")],
    [("11:35", "grace", "Pairing on the retry fix later?"), ("14:05", "erin", "Runbook updated, have a look when you can"),
     ("16:20", "bob", "Budget approved, thanks for pushing")],
    [("11:50", "alice", "Lunch at 12:30?"), ("14:55", "erin", "You're on call from tonight, handover at 17:00?")],
    [("10:05", "grace", "Heard about last night. Need anything?"), ("15:10", "bob", "Nice work on the rollback"),
     ("16:45", "erin", "Going home early, wrecked. Thanks again")],
    [("10:15", "erin", "Swapping on-call next week, ok with you?"), ("14:50", "grace", "Merged your fix 🎉")],
]
MENTIONS = {1: ("frank", "@Sam can you review the checkout mockups?"),
            3: ("frank", "@Sam which font size did we agree for receipts?")}
CREW_LUNCH = [
    [("dan", "Bouldering tomorrow?"), ("alice", "tomorrow works"), ("carol", "tomorrow!"),
     ("dan", "19:00 then"), ("alice", "booking the wall")],
    [("alice", "Anyone got a spare chalk bag?"), ("dan", "I have two"), ("alice", "you're a hero"),
     ("carol", "bring the brush too")],
    [("carol", "That new gym has a Monday discount"), ("dan", "how much?"), ("carol", "half price after 8"),
     ("dan", "sold"), ("alice", "count me in"), ("carol", "🧗")],
    [("dan", "Photos from Tuesday"), ("alice", "that heel hook 😂"), ("carol", "send the full set"),
     ("dan", "uploading")],
    [("alice", "Saturday at 14:00, Berta Block?"), ("dan", "yes"), ("carol", "yes, then pizza"),
     ("dan", "pizza is mandatory"), ("alice", "booked for four")],
]
CREW_EVENING = [
    [("dan", "Photos from Sunday are up"), ("alice", "who took the one of me falling"), ("carol", "guilty")],
    [("alice", "Who's bringing the rope?"), ("dan", "Me! And the quickdraws"), ("carol", "I've got snacks"),
     ("alice", "perfect")],
    [("carol", "That was fun yesterday"), ("dan", "my forearms are still gone"), ("alice", "same time next week?"),
     ("dan", "obviously")],
    [("dan", "Anyone up for a film tonight?"), ("alice", "too tired"), ("carol", "maybe Sunday"),
     ("dan", "Sunday it is")],
    [("dan", "Karaoke tonight?"), ("alice", "after the work drinks"), ("carol", "I'm in, Sam's fading already"),
     ("dan", "Weserstraße, 22:00")],
]
# (time, text) per day.
CAROL = [
    [("07:40", "Don't forget the keys for the cellar"), ("17:55", "On my way home, need anything?"),
     ("21:15", "Running late, 20 min")],
    [("07:45", "Dinner at 8?"), ("17:50", "Picked up the parcel from Kim"),
     ("21:10", "Mum says the storm is getting bad up there")],
    [("07:50", "I'm at the market, pasta or rice?"), ("17:45", "Running late, 20 min"), ("21:20", "Home!")],
    [("07:35", "Your mum texted me about Christmas"), ("17:40", "Can you book the train for the 23rd?"),
     ("21:25", "Proud of you for last night. Early night?")],
    [("07:40", "Found a nice flat in Leipzig for a weekend in January"), ("17:45", "Home, the order arrived!"),
     ("21:30", "See you at the karaoke bar")],
    [("10:20", "Coffee at Bonanza before climbing?"), ("20:10", "Pizza was great")],
    [("10:00", "Brunch in bed?"), ("20:30", "Dinner at 8?")],
]
DAN = [
    [("12:40", "Found a new bouldering gym in Wedding"), ("19:15", "That route was brutal")],
    [("12:35", "Climbing tonight at 7?"), ("19:10", "Carol's in too")],
    [("12:50", "Lend me your belay device?"), ("19:25", "Sending you the video")],
    [("12:45", "Did you see the match?"), ("19:05", "haha")],
    [("12:30", "Beer on Friday?"), ("19:20", "ok see you there")],
    [("15:30", "Sending you the video from today")],
    [("15:40", "Film tonight still on?")],
]
WORK_MAIL = [
    ("bob@example.com", "Bob Martin", "Re: rollback notes", "Thanks, looks good to me."),
    ("grace@example.com", "Grace Liu", "Search SLO draft", "First cut attached, comments welcome."),
    ("erin@example.com", "Erin Park", "On-call handover", "Nothing open; two noisy alerts muted."),
    ("hr@example.com", "People team", "Reminder: holiday requests", "Please file December leave by Friday."),
    ("it@example.com", "IT", "Laptop update tonight", "Your laptop restarts at 20:00."),
    ("frank@example.com", "Frank Ortiz", "Checkout mockups v3", "New receipt layout, see Figma."),
    ("bob@example.com", "Bob Martin", "1:1 notes", "Agenda for Thursday attached."),
    ("wiki@example.com", "Wiki", "Page updated: payments runbook", "Erin Park edited 3 sections."),
    ("grace@example.com", "Grace Liu", "Retry fix benchmarks", "40% fewer retries at p99."),
    ("frank@example.com", "Frank Ortiz", "Receipt fonts", "Two options, which one?"),
    ("bob@example.com", "Bob Martin", "Quarterly planning", "Doc is open for comments until Friday."),
    ("erin@example.com", "Erin Park", "Incident 4740: action items", "Five items, owners assigned."),
    ("office@example.com", "Office", "Christmas party", "18 December, sign up by Monday."),
    ("grace@example.com", "Grace Liu", "Search indexer", "Restart scheduled at 14:00."),
    ("bob@example.com", "Bob Martin", "Team offsite", "Leipzig or Dresden? Vote in the doc."),
]
PERSONAL_MAIL = [
    ("news@bikeshop.example", "Bike Shop Weekly", "Winter tyres are here", "Studded, quiet, and 15% off."),
    ("club@climbing.example", "Climbing club", "December schedule", "The Christmas climb is on the 19th."),
    ("noreply@rail.example", "Rail", "Your booking", "Berlin → Hamburg, 23 Dec, seat 54."),
    ("landlord@home.example", "Building management", "Heating check", "The technician comes on Dec 2."),
    ("news@bookshop.example", "Bookshop", "Staff picks for December", "Twelve books for long evenings."),
]
NEWS_MORNING = [
    ("Morning Briefing", "Rail strike talks resume; storm expected on the coast Tuesday; DAX flat"),
    ("Morning Briefing", "Storm warning for Hamburg and the coast tonight; schools open"),
    ("Morning Briefing", "Storm damage in the north; trains to Hamburg delayed"),
    ("Morning Briefing", "Payments outage overnight hit card checkouts across Europe"),
    ("Morning Briefing", "Black Friday: retailers expect record online sales"),
    ("Weekend Briefing", "Christmas markets open Monday; mild weekend ahead"),
    ("Weekend Briefing", "First Advent Sunday; frost expected tonight"),
]
NEWS_DAY = [
    ("Berlin", "BVG adds night buses for the Christmas markets", "berlin", 0.3),
    ("Berlin", "New bike lanes on Kantstraße open", "berlin", 0.3),
    ("Berlin", "Tempelhof ice rink opens Saturday", "berlin", 0.3),
    ("Business", "ECB keeps rates unchanged", "business", 0.4),
    ("Business", "Retail sales up 1.2% in October", "business", 0.3),
    ("Business", "Rail operator and union reach a deal", "business", 0.4),
    ("Tech", "EU agrees on app store rules", "tech", 0.5),
    ("Tech", "Open-source maintainers get new funding", "tech", 0.4),
    ("Tech", "A new phone that folds three times", "tech", 0.3),
    ("Sport", "Union Berlin win 2:1", "sport", 0.2),
    ("Sport", "Alba Berlin lose in overtime", "sport", 0.2),
    ("Science", "Comet visible after sunset this week", "science", 0.4),
    ("Science", "Oldest tree rings reveal a 12th-century storm", "science", 0.3),
    ("Weather", "First frost of the season tonight", "weather", 0.5),
    ("Culture", "Philharmonie announces spring season", "culture", 0.2),
    ("Culture", "Berlinale reveals its jury", "culture", 0.2),
]
NEWS_EVENING = [
    ("Evening Briefing", "Storm warning upgraded for the coast; ferries cancelled"),
    ("Evening Briefing", "Storm reaches the coast; Hamburg harbour closed"),
    ("Evening Briefing", "Cleanup after the storm; rail traffic normal again"),
    ("Evening Briefing", "Card payments restored after overnight outage"),
    ("Evening Briefing", "Black Friday traffic breaks records"),
    ("Evening Briefing", "Advent weekend: markets crowded, roads clear"),
    ("Evening Briefing", "Week ahead: budget vote, rail talks"),
]
EPISODES = [
    ("Night Science", "Why we dream", 0.3), ("Tech Talk", "Rust in the kernel, one year on", 0.6),
    ("Market Minute", "Why rates fell", 0.5), ("Night Science", "The physics of snowflakes", 0.3),
    ("Tech Talk", "Incident reviews without blame", 0.6), ("Market Minute", "Black Friday by the numbers", 0.5),
    ("Night Science", "Dark skies in the city", 0.3), ("Tech Talk", "Postmortems that people read", 0.6),
    ("Market Minute", "The week in three charts", 0.5), ("Night Science", "How birds navigate", 0.3),
    ("Tech Talk", "Retries, backoff and jitter", 0.6), ("Market Minute", "Christmas spending", 0.5),
]
DEALS = [
    ("Black Friday preview", "Your wishlist items are on sale from Friday"),
    ("Price drop", "The headlamp on your wishlist is 20% off"),
    ("Back in stock", "Climbing shoes, size 42"),
    ("Cyber week", "Extra 10% with the app"),
]
WEEKEND_DEALS = [("Weekend picks", "Thermal mugs and gloves for the Christmas market"),
                 ("Advent calendar", "Door 1: free shipping today")]
RECIPES = ["Pumpkin soup in 25 minutes", "One-pot lentil curry", "Apple crumble for two",
           "Mushroom risotto", "Red cabbage salad", "Potato pancakes", "Baked apples"]
LUNCH_SPOTS = ["Markthalle Neun", "Curry 36", "Mensa Nord", "Bäckerei Siebert", "Dachkantine"]
EVENING_SHOPS = ["REWE Oranienstraße", "dm Drogerie", "Späti Eck", "Kino International", "Edeka Hauptbahnhof"]
MEETINGS = ["Design review", "Vendor call", "1:1 with Bob", "Incident follow-up", "Sprint demo"]
TOMORROW = ["Standup at 09:30", "Dentist at 08:15", "Incident review at 11:00", "Drinks after work", None]

news_deck = []


def day_news(n):
    """n stories for one day, none repeated within the week until the list runs out."""
    global news_deck
    out = []
    for _ in range(n):
        if not news_deck:
            news_deck = NEWS_DAY[:]
            rng.shuffle(news_deck)
        out.append(news_deck.pop())
    return out


mail_deck = WORK_MAIL[:]
rng.shuffle(mail_deck)
build = [4800]
ticket = [1430]


def work_mail(t, i):
    """Work mail: a colleague (from a shuffled deck), a CI build or a Tracker ticket."""
    kind = rng.random()
    if kind < 0.25:
        build[0] += rng.randint(3, 9)
        ok = rng.random() < 0.7
        mail(t, "ci@build.example", "CI", "main: build %d %s" % (build[0], "passed" if ok else "failed"),
             "All tests passed." if ok else "test_checkout_timeout failed on arm64", thread="ci", badge=i)
    elif kind < 0.5 or not mail_deck:
        ticket[0] += rng.randint(1, 4)
        mail(t, "jira@tracker.example", "Tracker", "PAY-%d %s" % (ticket[0], rng.choice(["assigned to you", "commented", "resolved"])),
             rng.choice(["Retry storms on card declines", "Receipt font size", "Timeouts on checkout",
                         "Alert threshold for p95", "Flaky test_checkout_timeout"]), thread="tracker", badge=i)
    else:
        sender, name, subject, body = mail_deck.pop()
        mail(t, sender, name, subject, body, badge=i)


# ---------------------------------------------------------------------------------------------
# The week.

def weekday(d):
    """The weekday rhythm for day d (0 = Monday … 4 = Friday)."""
    # Morning: a podcast, the briefing and a story or two (held for 08:00), a mail sync, Carol.
    episode(at(d, "07:05", 3), *EPISODES[d])
    news(at(d, "07:10", 5), *NEWS_MORNING[d], "briefing", 0.6)
    for title, body, thread, rel in day_news(rng.randint(1, 2)):
        news(at(d, "07:35", 15), title, body, thread, rel)
    mail_sync(at(d, "07:20", 5), rng.randint(2, 6))
    if d in (0, 2, 4):
        card(at(d, "08:20", 5), "3,%02d" % rng.randint(10, 90), "Bäckerei Siebert")

    # Work: standup, Team bursts, mail, colleagues, the calendar.
    burst(at(d, "09:05", 2), "team", TEAM_MORNING[d])
    calendar(at(d, "09:20"), "Team standup", "In 10 minutes, Room 4.2")
    for i in range(rng.randint(5, 7)):
        work_mail(at(d, "%02d:%02d" % (rng.randint(9, 16), rng.randint(0, 59))), i + 1)
    mail_sync(at(d, "13:30", 20), rng.randint(1, 4))
    p = PERSONAL_MAIL[d]
    mail(at(d, "10:40", 30), p[0], p[1], p[2], p[3], criteria="personal")
    for hhmm, who, body in COLLEAGUE_DM[d]:
        dm(at(d, hhmm, 3), who, body)
    if d in MENTIONS:
        group_msg(at(d, "11:20", 10), "team", *MENTIONS[d], mentioned=True)
    recipe(at(d, "11:30", 5), RECIPES[d])
    burst(at(d, "14:30", 20), "team", TEAM_AFTERNOON[d])
    calendar(at(d, "15:50", 5), MEETINGS[d], "In 10 minutes, Room 2.1")
    mail_badge(at(d, "16:20", 10), rng.randint(2, 5))
    # Lunch: the Climbing crew and Dan (friends: they wait), a card payment.
    burst(at(d, "12:10", 10), "climbing-crew", CREW_LUNCH[d])
    card(at(d, "12:55", 5), "%d,%02d" % (rng.randint(7, 14), rng.randint(0, 99)), LUNCH_SPOTS[d])
    # News and deals through the day (held for 18:00).
    for title, body, thread, rel in day_news(rng.randint(2, 3)):
        news(at(d, "%02d:%02d" % (rng.randint(10, 16), rng.randint(0, 59))), title, body, thread, rel)
    if d < len(DEALS):
        deal(at(d, "13:30", 60), *DEALS[d])

    # Evening: people, a podcast, a game that may not notify, the evening briefing.
    for hhmm, body in CAROL[d]:
        dm(at(d, hhmm, 5), "carol", body)
    for hhmm, body in DAN[d]:
        dm(at(d, hhmm, 5), "dan", body)
    burst(at(d, "18:30", 15), "climbing-crew", CREW_EVENING[d])
    episode(at(d, "19:30", 10), *EPISODES[d + 7] if d + 7 < len(EPISODES) else EPISODES[d + 2])
    card(at(d, "19:40", 20), "%d,%02d" % (rng.randint(12, 48), rng.randint(0, 99)), EVENING_SHOPS[d])
    game(at(d, "20:00", 20), "Come back and play")
    news(at(d, "21:00", 5), *NEWS_EVENING[d], "briefing", 0.5)
    if TOMORROW[d]:
        calendar(at(d, "22:30", 5), "Tomorrow", TOMORROW[d], level="passive")


def weekend(d):
    """Saturday (5) and Sunday (6): later, fewer, mostly friends."""
    for title, body, thread, rel in day_news(2):
        news(at(d, "07:35", 20), title, body, thread, rel)
    deal(at(d, "07:30", 10), *WEEKEND_DEALS[d - 5])
    news(at(d, "08:30", 20), *NEWS_MORNING[d], "briefing", 0.6)
    mail_sync(at(d, "09:40", 20), rng.randint(1, 3))
    for hhmm, body in CAROL[d]:
        dm(at(d, hhmm, 10), "carol", body)
    for hhmm, body in DAN[d]:
        dm(at(d, hhmm, 10), "dan", body)
    card(at(d, "11:00", 30), "%d,%02d" % (rng.randint(5, 30), rng.randint(0, 99)), "Wochenmarkt Kollwitzplatz")
    episode(at(d, "12:00", 30), *EPISODES[d])
    for title, body, thread, rel in day_news(2):
        news(at(d, "14:00", 90), title, body, thread, rel)
    game(at(d, "17:00", 30), "Your daily reward is waiting")
    news(at(d, "19:00", 10), *NEWS_EVENING[d], "briefing", 0.5)
    episode(at(d, "19:45", 10), *EPISODES[d + 5])


for d in range(5):
    weekday(d)
weekend(5)
weekend(6)

# --- Monday 23: an ordinary start; Sunday night's last message arrived after midnight.
dm(at(0, "00:20"), "dan", "home safe, great weekend")
group_msg(at(0, "06:40"), "climbing-crew", "alice", "Gym is closed today, FYI")
call(at(0, "10:30"), "bob")
code(at(0, "09:45", 3), "Tracker")
dm(at(0, "23:15"), "alice", "Thanks for today, sleep well!")

# --- Monday night: the call centre calls twice at 02:10 (a stranger: stays silenced).
dm(at(1, "00:35"), "dan", "still up? can't sleep after that espresso")
call(at(1, "02:10"), "callcentre")
call(at(1, "02:11"), "callcentre")

# --- Tuesday 24: Alice's VIP mail, parcel-88, a bank sign-in, the storm; Mum calls twice at night.
mail(at(1, "08:10"), "alice@example.com", "Alice Doe", "Q4 budget: sign-off needed", "Can you approve before 3?",
     thread="q4-budget", badge=3)
parcel(at(1, "08:30"), "parcel-88", "Out for delivery", "Arriving between 14:00 and 16:00")
parcel(at(1, "11:40"), "parcel-88", "Delivered", "Left with your neighbour, Kim (2nd floor)")
code(at(1, "12:03"), "Bank")
bank_security(at(1, "12:05"), "Someone signed in to your account from Firefox on Linux. Was it you?")
news(at(1, "11:15"), "Breaking", "Storm warning: gusts up to 120 km/h on the coast tonight", "breaking", 0.9,
     level="time-sensitive")
call(at(1, "16:10"), "callcentre")
page(at(1, "16:00"), "search-indexer", "SEV3: indexing lag 12 minutes", 4720, "search")
news(at(1, "22:50"), "Breaking", "Storm hits Hamburg: harbour closed, power cuts in Altona", "breaking", 0.9,
     level="time-sensitive")
group_msg(at(1, "23:05"), "climbing-crew", "dan", "Storm's bad up north, hope your families are ok")
call(at(1, "23:40"), "mum")
call(at(1, "23:42"), "mum")
dm(at(1, "23:55"), "carol", "Mum called me too, she's fine, just a tree on the shed")

# --- Wednesday 25 (on call): a payments SEV3 in the afternoon, Erin's handover.
page(at(2, "15:05"), "payments-api", "SEV3: p95 latency 900 ms (threshold 600 ms)", 4731, "payments")
page(at(2, "15:25"), "payments-api", "Resolved: latency back under threshold", 4731, "payments")
dm(at(2, "17:20"), "erin", "You're on call tonight, runbook is up to date. Sleep well 🤞")
call(at(2, "13:05"), "carol")

# --- Wednesday night: SEV1 at 03:12, Erin calls twice for the bridge, updates until resolved.
dm(at(2, "23:20"), "dan", "Climbing on Saturday still on?")
page(at(3, "03:12"), "payments-api", "SEV1: checkout failing for all card payments", 4740, "payments", critical=True)
call(at(3, "03:16"), "erin")
call(at(3, "03:18"), "erin")
page(at(3, "03:31"), "payments-api", "Update: rollback in progress (Erin is incident lead)", 4740, "payments",
     level="time-sensitive")
page(at(3, "04:05"), "payments-api", "Resolved: card payments recovered", 4740, "payments", level="time-sensitive")
dm(at(3, "04:10"), "erin", "Thanks for jumping on. Go back to sleep, I'll write it up")
mail(at(3, "04:20"), "erin@example.com", "Erin Park", "Incident 4740: timeline", "Draft timeline for the review.")

# --- Thursday 26: the review; Bob calls; at midnight the Black Friday deals start.
calendar(at(3, "10:50"), "Incident review 4740", "In 10 minutes, Room 4.2")
call(at(3, "16:40"), "bob")
code(at(3, "14:12"), "Cloud console")
dm(at(3, "23:30"), "alice", "Review went well. Proud of you two")
deal(at(4, "00:00"), "Black Friday is live", "Up to 50% off everything on your wishlist", relevance=0.4,
     thread="black-friday")
deal(at(4, "00:30"), "Black Friday", "Climbing gear: 30% off until Sunday", relevance=0.3, thread="black-friday")

# --- Friday 27: Black Friday; drinks after work; the crew past midnight.
for hhmm, title, body in [("09:10", "Black Friday", "Doorbuster: noise-cancelling headphones -40%"),
                          ("10:30", "Black Friday", "Your basket is waiting: 3 items"),
                          ("12:00", "Lunch deal", "Free shipping for the next hour"),
                          ("13:45", "Black Friday", "Sleeping bags -35%"),
                          ("15:20", "Black Friday", "Last hours: winter jackets -50%"),
                          ("16:30", "Black Friday", "Wishlist: the headlamp is now 25% off")]:
    deal(at(4, hhmm, 5), title, body, relevance=0.2, thread="black-friday")
# A flash sale delivered late, after it expired: dropped.
deal(at(4, "11:20"), "Flash sale", "Running shoes -60% until 11:15", expires=at(4, "11:15"))
order_today(at(4, "07:30"), "5521", "18:00 and 20:00")
group_msg(at(4, "16:45"), "team", "bob", "Drinks at 17:30 at the usual place, first round on me")
dm(at(4, "22:40"), "dan", "where are you guys?")
for hhmm, who, body in [("23:10", "dan", "Karaoke bar on Weserstraße, come!"), ("23:25", "alice", "on my way"),
                        ("23:48", "carol", "Sam bailed, fast asleep 😴"), ("00:20", "dan", "legend status achieved"),
                        ("00:45", "alice", "taxi home, night all"), ("01:30", "dan", "home safe")]:
    day = 4 if hhmm >= "12:00" else 5
    group_msg(at(day, hhmm), "climbing-crew", who, body)
group_msg(at(4, "23:26"), "climbing-crew", "alice", "wrong chat, sorry")["id"] = "fri-unsent"
emit(at(4, "23:27"), {"app": "com.example.chat", "id": "fri-unsent", "withdraw": True})

# --- Saturday 28: order #5521 arrived yesterday; climbing at 14:00; Bob writes; the call centre at night.
dm(at(5, "09:55"), "bob", "Sorry for the weekend ping: can you check the incident doc on Monday?")
mail(at(5, "10:20"), "bob@example.com", "Bob Martin", "Incident 4740 follow-ups", "Three action items for Monday.")
burst(at(5, "13:20"), "climbing-crew", [("alice", "At the gym, wall 3"), ("dan", "5 min"),
                                          ("carol", "parking now"), ("dan", "who has tape?")])
burst(at(5, "17:30"), "climbing-crew", [("carol", "Pizza at Gazzo, 19:00"), ("dan", "🍕"),
                                          ("alice", "yes please")])
parcel(at(5, "11:10"), "parcel-91", "Shipped", "Your Black Friday order arrives on Monday")
deal(at(5, "10:00"), "Cyber weekend", "Black Friday prices extended until Monday", relevance=0.3,
     thread="black-friday")
deal(at(5, "09:30"), "Flash sale", "Chalk bags -50% until 09:00", expires=at(5, "09:00"))
call(at(5, "23:40"), "callcentre")
call(at(5, "23:41"), "callcentre")
group_msg(at(5, "23:15"), "climbing-crew", "dan", "My arms hurt to type")

# --- Sunday 29: quiet; Mum calls; Monday arrives by mail and calendar in the evening.
call(at(6, "16:00"), "mum")
dm(at(6, "11:30"), "alice", "Brunch next Sunday?")
calendar(at(6, "20:00"), "Tomorrow", "Sprint planning at 09:30", level="passive")
mail(at(6, "21:10"), "ci@build.example", "CI", "main: build %d passed" % (build[0] + 4), "All tests passed.", thread="ci")
mail(at(6, "21:40"), "jira@tracker.example", "Tracker", "PAY-%d assigned to you" % (ticket[0] + 2),
     "Postmortem action: retry budget", thread="tracker")
dm(at(6, "22:15"), "erin", "Postmortem draft is in the doc, no rush")
dm(at(6, "23:20"), "dan", "Same time next week? 🧗")

DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
for t, _, env in sorted(events, key=lambda e: (e[0], e[1])):
    day = DAYS[(t - MONDAY).days]
    counter[day] = counter.get(day, 0) + 1
    out = {"app": env.pop("app"), "user": USER,
           "id": env.pop("id", "%s-%03d" % (day, counter[day])), "date": t.isoformat()}
    out.update(env)
    sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
