"""The frame every page shares: the report's stylesheet plus the UI's, the navigation, the live
indicator and the one script (served from /static/ui.js; the CSP allows no other)."""

from __future__ import annotations

import functools
from html import escape
from urllib.parse import quote

from engine.audit.report_css import CSS

UI_CSS = """
nav.top{background:#161e33;color:#cfd6e6;font-size:13px}
nav.top .wrap{display:flex;gap:18px;align-items:center;height:40px}
nav.top a{color:#fff;text-decoration:none;font-weight:600}
nav.top .db{opacity:.65;margin-left:auto;font-family:ui-monospace,Menlo,monospace;font-size:12px}
.live{display:inline-flex;align-items:center;gap:6px;font-size:12px}
.live i{width:9px;height:9px;border-radius:50%;background:#888;display:inline-block}
.live.on i{background:#2fb36a;box-shadow:0 0 0 3px rgba(47,179,106,.25)}.live.off i{background:#e5484d}
header.slim{padding:22px 0 54px}
a{color:var(--accent)}
.toolbar{display:flex;gap:10px;align-items:center;flex-wrap:wrap;margin-bottom:12px}
.toolbar input,.toolbar select{font:inherit;padding:5px 9px;border:1px solid var(--line);border-radius:8px}
#runs-table td,#runs-table th{white-space:nowrap}.toolbar .muted{margin:0}.scroll-x{overflow-x:auto}
th.sortable{cursor:pointer;user-select:none}th.sortable:after{content:" ⇅";opacity:.35}
th.sorted-asc:after{content:" ↑";opacity:1}th.sorted-desc:after{content:" ↓";opacity:1}
.pill.st{background:#8a93a6}.pill.st.running{background:#3b6fd1}.pill.st.completed{background:#2fb36a}
.pill.st.failed{background:#e5484d}.pill.st.stopped{background:#f0a020}.pill.st.planned{background:#b9c0cd}
.pill.st.abandoned{background:#7b2d2d}
pre.code,pre.out,div.hl pre{background:#0f1524;color:#e6e9f0;border-radius:10px;padding:12px 14px;overflow:auto;
 font:12px/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;max-height:560px;margin:0}
pre.out{background:#f6f7fa;color:#1f2633;border:1px solid var(--line)}
pre.diff{background:#fbfbfd;color:#1f2633;border:1px solid var(--line);border-radius:10px;padding:10px 0;
 font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow:auto;max-height:560px;margin:0}
pre.diff span{display:block;padding:0 14px;white-space:pre}
pre.diff .add{background:#e6f6ea;color:#14532d}pre.diff .del{background:#fde8e8;color:#7f1d1d}
pre.diff .hunk{color:#6b7385;background:#f0f2f7}
.grid-cells td.cell{min-width:120px}
.cell .score{font-weight:700;font-variant-numeric:tabular-nums}.cell a{text-decoration:none;color:inherit;display:block}
.advice{background:#fff6e0;border-radius:10px;padding:10px 14px;margin:0 0 12px}
.advice code,.mono-line{font-family:ui-monospace,Menlo,monospace;background:#fff;padding:2px 6px;border-radius:5px}
.events td{font-size:12.5px}.events td.payload{font-family:ui-monospace,Menlo,monospace;font-size:11.5px;
 word-break:break-all;color:#3d4556}
.kv th{text-align:left;color:var(--muted);font-weight:600;padding:4px 12px 4px 0;vertical-align:top;width:170px}
.kv td{padding:4px 0;word-break:break-word}
"""


@functools.cache
def pygments_css() -> str:
    from pygments.formatters import HtmlFormatter

    return str(HtmlFormatter(style="monokai").get_style_defs(".hl"))


def page(title: str, body: str, *, live: str | None = None, seq: int | None = None, label: str = "",
         eyebrow: str = "engine ui", heading: str = "") -> str:
    """A whole page. ``live``: the server-sent events URL this page follows (None: a static page);
    ``seq``: what the page shows so far (its live stream starts after it)."""
    live_attr = f' data-live="{escape(live)}"' if live else ""
    if seq is not None:
        live_attr += f' data-seq="{seq}"'
    indicator = '<span class="live" id="live-state"><i></i><span>connecting…</span></span>' if live else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title><style>{CSS}{UI_CSS}{pygments_css()}</style>
<script src="/static/ui.js" defer></script></head>
<body{live_attr}><nav class="top"><div class="wrap"><a href="/">runs</a><a href="/campaigns">campaigns</a>
{indicator}<span class="db">{escape(label)}</span></div></nav>
<header class="slim"><div class="wrap"><div class="eyebrow">{escape(eyebrow)}</div>{heading}</div></header>
<main class="wrap">{body}</main>
<footer class="wrap">Read-only view of the event log; nothing here writes to it.</footer>
</body></html>
"""


def card(title: str, html: str, *, key: str = "") -> str:
    ident = f' id="sec-{escape(key)}"' if key else ""
    return f'<section class="card"><h2>{escape(title)}</h2><div{ident}>{html}</div></section>'


def status_pill(status: str) -> str:
    return f'<span class="pill st {escape(status)}">{escape(status)}</span>'


def run_href(run_id: str) -> str:
    return f"/run/{quote(run_id, safe='')}"


def solution_href(run_id: str, solution_id: str) -> str:
    return f"{run_href(run_id)}/solution/{quote(solution_id, safe='')}"


def campaign_href(name: str) -> str:
    return f"/campaign/{quote(name, safe='')}"
