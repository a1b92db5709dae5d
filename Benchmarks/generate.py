#!/usr/bin/env python3
"""A realistic one-week notification stream for scripts/bench.sh, deterministic for a seed.

    python3 Benchmarks/generate.py --users 200 --per-user 1000 --out stream.jsonl [--lua anchor.lua]

Each user gets the same mix a busy phone sees in a week (Monday 25 November 2024 00:00 to Sunday
23:59, Europe/Berlin, UTC+01:00 all week): direct and group messages (with SiriKit communication
data, some with images, some @-mentioning the user), calls (some repeated within minutes), work
and personal mail, calendar reminders, news (some breaking), podcast episodes, shop deals and
parcel updates that replace each other (apns-collapse-id), bank transactions, pager pages (a few
SEV1 with a critical sound), sign-in codes that expire, fitness nudges (passive), a denied game,
background syncs, and an expired flash sale now and then. More arrive in the day than at night.
The stream is ordered by date, users interleaved. `--lua` also writes the same notifications as a
Lua chunk returning pre-built tables (for Benchmarks/anchor.lua), with each one's UNIX date.
"""
import argparse
import itertools
import json
import random
from datetime import datetime, timedelta, timezone

BERLIN = timezone(timedelta(hours=1))
# A Monday, in the past: the library benchmark replays the week week after week, and a store never takes a
# date past tomorrow's wall clock as its newest (retention), so the replays stay behind today.
WEEK_START = datetime(2024, 11, 25, 0, 0, tzinfo=BERLIN)

# Arrivals per hour of the day (relative): quiet at night, busy in the day and evening.
HOUR_WEIGHTS = [1, 0.5, 0.3, 0.3, 0.3, 0.6, 2, 5, 8, 9, 9, 9, 10, 9, 9, 9, 9, 9, 10, 10, 9, 7, 5, 2.5]
HOURS = range(24)
HOUR_CUM = list(itertools.accumulate(HOUR_WEIGHTS))

CONTACTS = [
    ("alice@example.com", "Alice Doe"), ("bob@example.com", "Bob Martin"), ("erin@example.com", "Erin Park"),
    ("grace@example.com", "Grace Liu"), ("carol@example.com", "Carol Doe"), ("+49 40 5550 0202", "Mum"),
    ("dan@example.com", "Dan Weber"), ("+49 151 5550 0101", "Carol Doe"), ("+1 617 555 1212", "Alice Doe"),
]
STRANGERS = [("friend%d@example.net" % i, "Friend %d" % i) for i in range(1, 25)] + \
            [("+49 30 5550 %04d" % (9000 + i), None) for i in range(12)]
GROUPS = ["Team", "Climbing crew", "Family", "Book club", "Flat 3B", "Project Falcon"]
WORDS = ("the a meeting lunch tomorrow tonight update please check review ready thanks call later "
         "train late coffee plan weekend photo deploy build report draft budget ticket idea").split()
NEWS_TOPICS = ["world", "tech", "sport", "business", "science", "local"]
SHOWS = ["Night Science", "Tech Talk", "Daily Brief", "History Hour", "Cooking Today"]
SERVICES = ["payments", "search", "auth", "billing"]

# (kind, weight per day)
KINDS = [
    ("direct", 35), ("group", 30), ("call", 3), ("mail", 25), ("calendar", 4), ("news", 20),
    ("podcast", 3), ("shop", 6), ("bank", 3), ("pager", 1), ("auth", 2), ("fitness", 3),
    ("game", 2), ("sync", 5), ("weather", 1),
]


def sentence(rng, lo=3, hi=12):
    words = [rng.choice(WORDS) for _ in range(rng.randint(lo, hi))]
    return " ".join(words).capitalize()


def rfc3339(dt):
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + "+01:00"


def person(handle, name):
    p = {"handle": handle}
    if name:
        p["name"] = name
    return p


def sender(rng):
    return rng.choice(CONTACTS) if rng.random() < 0.45 else rng.choice(STRANGERS)


def slug(handle):
    """A direct conversation's thread id: the handle's local part, or its digits."""
    local = handle.split("@")[0]
    return "".join(c for c in local if c.isalnum()).lower()


def first_name(name, handle):
    return (name or handle).split(" ")[0]


class User:
    def __init__(self, index, rng):
        self.name = "u%03d" % index
        self.me = person("u%03d@example.com" % index, "User %d" % index)
        self.rng = rng
        self.seq = 0
        self.parcels = 0

    def next_id(self, prefix):
        self.seq += 1
        return "%s-%s%05d" % (self.name, prefix, self.seq)

    def notifications(self, kind, when):
        """One or more notifications of a kind at `when` (a call may ring twice, a chat come in a burst)."""
        rng = self.rng
        out = []
        base = {"user": self.name, "date": rfc3339(when)}
        if kind in ("direct", "group"):
            burst = 1 if rng.random() < 0.7 else rng.randint(2, 4)
            group = rng.choice(GROUPS) if kind == "group" else None
            who = sender(rng)
            for i in range(burst):
                at = when + timedelta(seconds=20 * i + rng.randint(0, 15))
                handle, name = who if i == 0 or kind == "direct" else sender(rng)
                display = name or handle
                thread = group.lower().replace(" ", "-") if group else slug(who[0])
                aps = {"alert": {"title": display if not group else "%s in %s" % (display, group),
                                 "body": sentence(rng), "summary-arg": first_name(name, handle)},
                       "sound": "default", "thread-id": thread, "category": "MESSAGE", "mutable-content": 1}
                if rng.random() < 0.5:
                    aps["badge"] = rng.randint(1, 30)
                payload = {"aps": aps}
                if group and rng.random() < 0.12:
                    payload["mentioned"] = True
                communication = {"kind": "message", "sender": person(handle, name), "recipients": [self.me],
                                 "conversation": thread, "service": "Chat"}
                if group:
                    communication["group"] = group
                    communication["recipients"] = [self.me] + [person(*rng.choice(CONTACTS)) for _ in range(rng.randint(2, 4))]
                n = dict(base, app="com.example.chat", id=self.next_id("m"), date=rfc3339(at), payload=payload,
                         communication=communication)
                if rng.random() < 0.1:
                    n["attachments"] = [{"type": "image"}]
                out.append(n)
        elif kind == "call":
            handle, name = sender(rng)
            rings = 2 if rng.random() < 0.15 else 1
            for i in range(rings):
                at = when + timedelta(seconds=i * rng.randint(40, 170))
                out.append(dict(base, app="com.example.phone", id=self.next_id("c"), date=rfc3339(at),
                                headers={"apns-push-type": "alert", "apns-priority": 10},
                                payload={"aps": {"alert": {"title": name or handle, "body": "Incoming call"},
                                                 "sound": "ringtone.caf", "category": "INCOMING_CALL"}},
                                communication={"kind": "call", "sender": person(handle, name),
                                               "recipients": [self.me], "service": "Phone"}))
        elif kind == "mail":
            handle, name = rng.choice(CONTACTS[:7]) if rng.random() < 0.4 else rng.choice(STRANGERS[:24])
            account = "work" if rng.random() < 0.6 else "personal"
            out.append(dict(base, app="com.example.mail", id=self.next_id("e"),
                            payload={"aps": {"alert": {"title": name or handle, "subtitle": sentence(rng, 2, 5),
                                                       "body": sentence(rng, 8, 20)},
                                             "sound": "mail.caf", "thread-id": account, "filter-criteria": account,
                                             "badge": rng.randint(1, 99)},
                                     "from": handle, "account": account}))
        elif kind == "calendar":
            aps = {"alert": {"title": sentence(rng, 2, 4), "body": "In 15 minutes"}, "sound": "default",
                   "thread-id": "events"}
            if rng.random() < 0.5:
                aps["interruption-level"] = "time-sensitive"
            out.append(dict(base, app="com.example.calendar", id=self.next_id("k"), payload={"aps": aps}))
        elif kind == "news":
            topic = rng.choice(NEWS_TOPICS)
            aps = {"alert": {"title": topic.capitalize(), "body": sentence(rng, 6, 14), "summary-arg": topic.capitalize()},
                   "thread-id": topic, "category": "NEWS", "relevance-score": round(rng.random(), 2)}
            if rng.random() < 0.08:
                aps["interruption-level"] = "time-sensitive"
            if rng.random() < 0.3:
                aps["sound"] = "default"
            n = dict(base, app="com.example.news", id=self.next_id("n"), payload={"aps": aps, "article": rng.randint(1, 10**6)})
            if rng.random() < 0.25:
                n["attachments"] = [{"type": "image"}]
            out.append(n)
        elif kind == "podcast":
            show = rng.choice(SHOWS)
            out.append(dict(base, app="com.example.podcasts", id=self.next_id("p"),
                            payload={"aps": {"alert": {"title": show, "body": sentence(rng, 4, 9), "summary-arg": show},
                                             "category": "NEW_EPISODE", "thread-id": "episodes"},
                                     "show": show, "episode": rng.randint(1, 400)}))
        elif kind == "shop":
            r = rng.random()
            if r < 0.55:
                out.append(dict(base, app="com.example.shop", id=self.next_id("s"),
                                payload={"aps": {"alert": {"title": "Deal", "body": sentence(rng, 5, 10)},
                                                 "category": "DEAL", "interruption-level": rng.choice(["active", "time-sensitive"])}}))
            elif r < 0.9:
                # A parcel's updates share a collapse id: each replaces the one before.
                if rng.random() < 0.4 or self.parcels == 0:
                    self.parcels += 1
                out.append(dict(base, app="com.example.shop",
                                headers={"apns-collapse-id": "%s-parcel-%d" % (self.name, self.parcels)},
                                payload={"aps": {"alert": {"title": "Your parcel", "body": sentence(rng, 4, 8)},
                                                 "category": rng.choice(["DELIVERY", "DELIVERY_TODAY"]), "thread-id": "parcels"}}))
            else:
                # A flash sale that expired before it arrived.
                expired = int((when - timedelta(hours=2)).timestamp())
                out.append(dict(base, app="com.example.shop", id=self.next_id("s"),
                                headers={"apns-expiration": expired},
                                payload={"aps": {"alert": {"title": "Flash sale", "body": "40% off for two hours"}, "category": "DEAL"}}))
        elif kind == "bank":
            amount = round(rng.expovariate(1 / 120.0), 2)
            out.append(dict(base, app="com.example.bank", id=self.next_id("b"),
                            payload={"aps": {"alert": {"title": "Card payment", "body": "%.2f EUR at %s" % (amount, rng.choice(WORDS).capitalize())},
                                             "sound": "default", "category": "TRANSACTION"},
                                     "amount": amount, "currency": "EUR"}))
        elif kind == "pager":
            service = rng.choice(SERVICES)
            if rng.random() < 0.25:
                aps = {"alert": {"title": service + "-api", "body": "SEV1: " + sentence(rng, 4, 8)},
                       "sound": {"critical": 1, "name": "siren.caf", "volume": 0.8}, "interruption-level": "critical"}
            else:
                aps = {"alert": {"title": service + "-api", "body": "SEV3: " + sentence(rng, 4, 8)}, "sound": "default",
                       "interruption-level": "time-sensitive"}
            aps.update({"category": "PAGE", "thread-id": service, "filter-criteria": service})
            out.append(dict(base, app="com.example.pager", id=self.next_id("g"), payload={"aps": aps, "incident": rng.randint(1000, 9999)}))
        elif kind == "auth":
            expires = int((when + timedelta(minutes=10)).timestamp())
            out.append(dict(base, app="com.example.auth", id=self.next_id("a"), headers={"apns-expiration": expires},
                            payload={"aps": {"alert": {"title": "Sign-in code", "body": "Your code is %06d" % rng.randint(0, 999999)},
                                             "sound": "default", "interruption-level": "time-sensitive"}}))
        elif kind == "fitness":
            out.append(dict(base, app="com.example.fitness", id=self.next_id("f"),
                            payload={"aps": {"alert": {"title": "Time to stand", "body": sentence(rng, 3, 6)},
                                             "interruption-level": "passive", "thread-id": "activity"}}))
        elif kind == "game":
            out.append(dict(base, app="com.example.game", id=self.next_id("x"),
                            payload={"aps": {"alert": {"title": "Your crops are ready", "body": sentence(rng, 3, 6)},
                                             "sound": "default", "badge": 1}}))
        elif kind == "sync":
            out.append(dict(base, app="com.example.mail", id=self.next_id("y"),
                            headers={"apns-push-type": "background", "apns-priority": 5},
                            payload={"aps": {"content-available": 1}, "mailbox": "INBOX"}))
        elif kind == "weather":
            level = "time-sensitive" if rng.random() < 0.3 else "active"
            out.append(dict(base, app="com.example.weather", id=self.next_id("w"),
                            payload={"aps": {"alert": {"title": "Weather", "body": sentence(rng, 4, 8)},
                                             "interruption-level": level, "sound": "default"}}))
        return out


def random_time(rng):
    day = rng.randrange(7)
    hour = rng.choices(HOURS, cum_weights=HOUR_CUM)[0]
    return WEEK_START + timedelta(days=day, hours=hour, seconds=rng.randrange(3600))


def generate(users, per_user, seed):
    rng = random.Random(seed)
    kinds = [k for k, _ in KINDS]
    cum = list(itertools.accumulate(w for _, w in KINDS))
    stream = []
    for u in range(users):
        user = User(u, random.Random(rng.getrandbits(64)))
        mine = []
        while len(mine) < per_user:
            kind = user.rng.choices(kinds, cum_weights=cum)[0]
            mine.extend(user.notifications(kind, random_time(user.rng)))
        del mine[per_user:]
        stream.extend(mine)
    stream.sort(key=lambda n: (n["date"], n["user"]))
    return stream


def lua_literal(value, out):
    if value is None:
        out.append("nil")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, (int, float)):
        out.append(repr(value))
    elif isinstance(value, str):
        out.append(json.dumps(value, ensure_ascii=False))  # JSON's escapes are valid in Lua here
    elif isinstance(value, list):
        out.append("{")
        for item in value:
            lua_literal(item, out)
            out.append(",")
        out.append("}")
    else:
        out.append("{")
        for key, item in value.items():
            out.append("[%s]=" % json.dumps(key))
            lua_literal(item, out)
            out.append(",")
        out.append("}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--per-user", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20261123)
    parser.add_argument("--out", required=True)
    parser.add_argument("--lua", help="also write the stream as a Lua chunk of pre-built tables")
    args = parser.parse_args()
    stream = generate(args.users, args.per_user, args.seed)
    with open(args.out, "w", encoding="utf-8") as f:
        for n in stream:
            f.write(json.dumps(n, ensure_ascii=False, separators=(", ", ": ")))
            f.write("\n")
    if args.lua:
        with open(args.lua, "w", encoding="utf-8") as f:
            f.write("return {\n")
            for n in stream:
                n = dict(n)
                n["date"] = int(datetime.fromisoformat(n["date"]).timestamp())
                out = []
                lua_literal(n, out)
                f.write("".join(out))
                f.write(",\n")
            f.write("}\n")


if __name__ == "__main__":
    main()
