"""A run's events filtered on the server (type, scope, a seq range), and one event in full."""

from __future__ import annotations

import json
from html import escape
from urllib.parse import urlencode

from engine.audit.runlog import RunLog
from engine.ui.layout import card, page, run_href
from engine.ui.pages_run import event_rows

PAGE_SIZE = 1000


def events_page(log: RunLog, *, label: str, type_: str, scope: str, before: int | None) -> str:
    chosen = [e for e in log.envelopes if (not type_ or e.type == type_) and (not scope or e.scope == scope)
              and (before is None or e.seq < before)]
    shown = chosen[-PAGE_SIZE:]
    base = run_href(log.run_id)
    types = sorted({e.type for e in log.envelopes})
    scopes = sorted({e.scope for e in log.envelopes})

    def select(name: str, values: list[str], current: str, any_label: str) -> str:
        opts = "".join(f'<option value="{escape(v)}"{" selected" if v == current else ""}>{escape(v)}</option>'
                       for v in values)
        return f'<select name="{name}"><option value="">{escape(any_label)}</option>{opts}</select>'

    form = (f'<form class="toolbar" method="get" action="{escape(base)}/events">'
            f'{select("type", types, type_, "any type")}{select("scope", scopes, scope, "any scope")}'
            '<button type="submit">filter</button></form>')
    older = ""
    if len(chosen) > len(shown) and shown:
        query = urlencode({"type": type_, "scope": scope, "before": shown[0].seq})
        older = f'<p><a href="{escape(base)}/events?{escape(query)}">older events</a></p>'
    table = ('<table class="grid-table events"><thead><tr><th>seq</th><th>time</th><th>type</th><th>scope</th>'
             f'<th>payload</th></tr></thead><tbody>{event_rows(log.run_id, shown)}</tbody></table>')
    caption = f'<p class="caption">{len(chosen)} matching events of {len(log.envelopes)}, newest first.</p>'
    heading = (f'<h1>Events <span class="runid">{escape(log.run_id)}</span></h1>'
               f'<div class="sub"><a style="color:#fff" href="{escape(base)}">back to the run</a></div>')
    return page(f"events · {log.run_id}", card("Events", form + caption + table + older), label=label,
                eyebrow="events", heading=heading)


def event_page(log: RunLog, seq: int, *, label: str) -> str | None:
    env = next((e for e in log.envelopes if e.seq == seq), None)
    if env is None:
        return None
    meta = {k: v for k, v in env.model_dump(mode="json").items() if k != "payload"}
    body = (card("Envelope", f'<pre class="out">{escape(json.dumps(meta, indent=1))}</pre>')
            + card("Payload", f'<pre class="out">{escape(json.dumps(env.payload, indent=1, ensure_ascii=False))}</pre>'))
    heading = (f'<h1>{escape(env.type)} <span class="runid">seq {env.seq}</span></h1>'
               f'<div class="sub"><a style="color:#fff" href="{escape(run_href(log.run_id))}">'
               f'{escape(log.run_id)}</a> · scope {escape(env.scope)}</div>')
    return page(f"{env.type} · {log.run_id}", body, label=label, eyebrow="event", heading=heading)
