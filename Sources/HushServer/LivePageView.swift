import Hush
import Mustache

/// The page at `/`: rendered on the server from `LivePage`; a few lines of script add the events
/// of `GET /v1/events` as they happen (docs/service.md, "The live page").
struct LivePageView: Sendable {
    private let template: MustacheTemplate

    init() {
        // The template is a constant of this file: a parse error is a bug, caught by the tests.
        template = try! MustacheTemplate(string: Self.text)
    }

    func render(_ page: LivePage, user: String?, userLimit: Int) -> String {
        let shown = page.cards.count
        var context: [String: Any] = [
            "now": page.now, "cards": page.cards, "events": page.events, "lastSeq": String(page.lastSeq),
            "userCount": page.userCount, "shown": shown, "more": page.userCount > shown, "userParameter": user ?? "",
        ]
        if let user { context["one"] = ["user": user] }
        return template.render(context)
    }

    /// Mustache escapes every `{{value}}` for HTML; the script writes event text with
    /// `textContent`, never as markup.
    static let text = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Hush, live</title>
        <style>
        body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1200px;padding:12px 16px;color:#212529}
        h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.15em;margin:.2em 0}h3{font-size:.95em;margin:.6em 0 .2em}
        .sub,.why,.next,#stream-state{color:#495057;font-size:.9em}
        main{display:grid;grid-template-columns:minmax(0,2fr) minmax(0,1fr);gap:20px}
        @media (max-width:760px){main{grid-template-columns:1fr}}
        .users{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:10px;align-content:start}
        .user{border:1px solid #dee2e6;border-radius:8px;padding:8px 10px}
        .focus{font-weight:600;margin:.2em 0}.focus.on{color:#5f3dc4}.focus.on::before{content:"◐ "}
        .waiting{margin:.15em 0;font-size:.9em}.none{color:#868e96}
        #events{list-style:none;padding:0;margin:0;font-size:.9em}#events li{border-bottom:1px solid #f1f3f5;padding:4px 0}
        #events li[data-kind=summary]::before{content:"▤ ";color:#e8590c}#events li[data-kind=focus]::before{content:"◐ ";color:#5f3dc4}
        time{font-variant-numeric:tabular-nums;color:#495057}
        </style>
        </head>
        <body>
        <header>
        <h1>Hush, live</h1>
        <p class="sub">Server time <time>{{now}}</time> · {{userCount}} user(s){{#more}}, the first {{shown}} by name (<code>/?user=NAME</code> shows one){{/more}}{{#one}} · only {{user}} (<a href="/">everyone</a>){{/one}}</p>
        </header>
        <main>
        <section class="users" aria-label="Users">
        {{#cards}}
        <article class="user" data-user="{{user}}">
        <h2>{{user}}</h2>
        <p class="focus{{#focusOn}} on{{/focusOn}}">{{focus}}</p>
        <p class="why">{{why}}</p>
        <h3>Waiting for a summary: <span class="waiting-count">{{waitingCount}}</span></h3>
        {{#waiting}}
        <p class="waiting" data-summary="{{summary}}">At <time>{{summary}}</time>: {{count}} ({{apps}})</p>
        {{/waiting}}
        {{^waiting}}
        <p class="waiting none">Nothing waits.</p>
        {{/waiting}}
        <p class="next">Next summary: <time>{{nextSummary}}</time></p>
        </article>
        {{/cards}}
        {{^cards}}
        <p>No users yet: a user appears with their first notification (<code>POST /v1/notifications</code>).</p>
        {{/cards}}
        </section>
        <section class="feed" aria-label="Events">
        <h2>Events</h2>
        <p id="stream-state">Connecting to the event stream…</p>
        <ol id="events" data-last="{{lastSeq}}" data-user="{{userParameter}}" aria-live="polite">
        {{#events}}
        <li data-seq="{{seq}}" data-kind="{{kind}}"><time>{{time}}</time> <b>{{user}}</b> {{text}}</li>
        {{/events}}
        </ol>
        </section>
        </main>
        <script>
        const list = document.getElementById("events"), state = document.getElementById("stream-state");
        const user = list.dataset.user;
        const source = new EventSource("/v1/events?after=" + list.dataset.last + (user ? "&user=" + encodeURIComponent(user) : ""));
        source.onopen = () => { state.textContent = "Live: events appear here as they happen."; };
        source.onerror = () => { state.textContent = "The stream is down; reconnecting…"; };
        function add(kind, message) {
          const event = JSON.parse(message.data), item = document.createElement("li"), time = document.createElement("time"), who = document.createElement("b");
          const shown = (event.notifications || []).length, dropped = (event.dropped || []).length;
          const text = kind === "focus" ? (event.focus === null ? "Focus off" : "Focus " + event.focus + " on") + (event.reason ? ": " + event.reason : "")
            : "Scheduled Summary: " + shown + " notification" + (shown === 1 ? "" : "s") + (dropped > 0 ? ", " + dropped + " expired" : "");
          item.dataset.seq = message.lastEventId; item.dataset.kind = kind; time.textContent = event.at; who.textContent = event.user;
          item.append(time, " ", who, " " + text); list.append(item);
          const card = [...document.querySelectorAll("article.user")].find(a => a.dataset.user === event.user);
          if (card && kind === "focus") { const f = card.querySelector(".focus"); f.textContent = event.focus === null ? "no focus" : event.focus; f.classList.toggle("on", event.focus !== null); card.querySelector(".why").textContent = event.reason; }
          if (card && kind === "summary") {
            const n = card.querySelector(".waiting-count"); n.textContent = Math.max(0, Number(n.textContent) - shown - dropped);
            card.querySelectorAll(".waiting").forEach(w => { if (w.dataset.summary === event.at) w.remove(); });
            card.querySelector(".next time").textContent = "the one after " + event.at;
          }
        }
        source.addEventListener("focus", m => add("focus", m));
        source.addEventListener("summary", m => add("summary", m));
        </script>
        </body>
        </html>

        """
}
