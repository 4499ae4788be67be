"""The report's inline stylesheet (kept apart so report.py stays readable)."""

CSS = """
:root{--ink:#1f2633;--muted:#6b7385;--line:#e3e6ee;--bg:#f4f6fa;--card:#fff;--accent:#3b5bdb}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);
 font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
.wrap{max-width:1220px;margin:0 auto;padding:0 28px}
header{background:linear-gradient(120deg,#1e2a4a 0%,#2f4b8f 55%,#3b6fd1 100%);color:#fff;padding:30px 0 64px}
.eyebrow{text-transform:uppercase;letter-spacing:.14em;font-size:11px;opacity:.7}
h1{margin:6px 0 4px;font-size:30px;font-weight:700;display:flex;align-items:center;gap:14px;flex-wrap:wrap}
.runid{font:500 15px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;opacity:.8;
 background:rgba(255,255,255,.12);padding:3px 10px;border-radius:6px}
.status{font-size:12px;text-transform:uppercase;letter-spacing:.08em;padding:4px 12px;border-radius:99px;font-weight:700}
.status.good{background:#2fb36a}.status.bad{background:#e5484d}.status.warn{background:#f0a020}
.sub{opacity:.85}
main{margin-top:-40px}
.card{background:var(--card);border-radius:14px;box-shadow:0 1px 2px rgba(16,24,40,.06),0 6px 22px rgba(16,24,40,.07);
 padding:22px 26px;margin-bottom:22px}
h2{margin:0 0 6px;font-size:18px}
h3{margin:22px 0 8px;font-size:15px}
.caption,.muted{color:var(--muted);margin:0 0 12px}
.kpis{display:grid;grid-template-columns:repeat(7,1fr);gap:12px;margin-bottom:18px}
.kpi{border:1px solid var(--line);border-radius:12px;padding:12px 14px;background:linear-gradient(180deg,#fff,#fafbfe)}
.k-label{font-size:11px;text-transform:uppercase;letter-spacing:.08em;color:var(--muted)}
.k-value{font-size:24px;font-weight:700;margin:2px 0;font-variant-numeric:tabular-nums;white-space:nowrap;
 overflow:hidden;text-overflow:ellipsis}
.k-sub{font-size:11.5px;color:var(--muted)}
table{border-collapse:collapse;width:100%}
.facts th{text-align:left;font-weight:600;color:var(--muted);width:160px;padding:5px 10px 5px 0;vertical-align:top}
.facts td{padding:5px 0;word-break:break-all}
.facts tr+tr{border-top:1px solid var(--line)}
.grid-table th{text-align:left;font-size:12px;color:var(--muted);font-weight:600;border-bottom:2px solid var(--line);
 padding:7px 10px}
.grid-table td{padding:7px 10px;border-bottom:1px solid var(--line);vertical-align:top}
.grid-table tbody tr:nth-child(even){background:#fafbfd}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
.small{font-size:12px}
.dec{font:600 11px ui-monospace,SFMono-Regular,Menlo,monospace;background:#eef2fb;color:#2f4b8f;border-radius:5px;padding:1px 6px}
.grid-table td.small{line-height:1.65}
.pill{color:#fff;border-radius:99px;padding:2px 10px;font-size:12px;font-weight:600;white-space:nowrap}
.lvl{border-radius:6px;padding:1px 8px;font-size:12px;font-weight:600;background:#eef1f6}
.lvl.warning,.lvl.warn{background:#fff3d6;color:#8a5a00}.lvl.error{background:#fde3e3;color:#a21b1b}
.alert{background:#fde3e3;color:#8c1d1d;border-radius:10px;padding:10px 14px;margin-bottom:12px}
.ok{color:#1d7a46;background:#e5f6ec;border-radius:10px;padding:10px 14px}
details{margin-top:12px}summary{cursor:pointer;color:var(--accent)}
.legend{display:flex;flex-wrap:wrap;gap:8px 18px;margin-top:8px;font-size:12.5px;color:#3d4556}
.lg{display:inline-flex;align-items:center;gap:6px}
.lg i{display:inline-block;width:11px;height:11px;border-radius:50%}
.lg i.line{width:22px;height:3px;border-radius:2px;background:#1f2633}
.lg b.x{color:#6b7385;font-size:15px;line-height:1}
.panels{display:grid;grid-template-columns:repeat(3,1fr);gap:26px}
.scroll{overflow-x:auto;border:1px solid var(--line);border-radius:12px;background:
 radial-gradient(circle at 1px 1px,#e6e9f1 1px,transparent 0) 0 0/18px 18px,#fcfcfe;padding:6px}
footer{color:var(--muted);font-size:12px;padding:6px 28px 40px}
svg text{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif}
.chart .grid{stroke:#e6e9f0}.chart .grid.light{stroke:#f0f2f6}.chart .axis{stroke:#c9ceda}
.chart .tick{font-size:11px;fill:#6b7385}.chart .tick.muted{font-style:italic}
.chart .label{font-size:12px;fill:#3d4556;font-weight:600}
.chart .band{font-size:11px;fill:#8a93a6;font-weight:600;text-transform:uppercase;letter-spacing:.06em}
.chart .best{fill:none;stroke:#1f2633;stroke-width:2.4;stroke-linejoin:round;opacity:.85}
.chart .best-ring{fill:none;stroke:#2fb36a;stroke-width:2.5}
.chart .callout{font-size:12px;font-weight:700;fill:#1d7a46}
.chart circle.pt{stroke:#fff;stroke-width:1.5;opacity:.92}
.chart .miss path{stroke-width:2.2;stroke-linecap:round}
.bars .panel-title{font-size:13px;font-weight:700;fill:#1f2633}
.bars .tick{font-size:12px;fill:#3d4556}.bars .tick.muted{fill:#9aa1b2}
.bars .track{fill:#f0f2f7}.bars .value{font-size:12px;fill:#1f2633;font-weight:600}
.graph .edge{fill:none}
.graph .edge.hi{stroke:#2b3445;stroke-width:2}
.graph .edge.lo{stroke:#b9c0cd;stroke-width:1.3;stroke-dasharray:4 3}
.graph .edge.gene{stroke:#3b6fd1;stroke-width:1.4;stroke-dasharray:2 3}
.graph .box{fill:#fff;stroke:#cfd5e1;stroke-width:1.2}
.graph .node.final .box{stroke:#2fb36a;stroke-width:3}
.graph .node.faded{opacity:.45}
.graph .n-origin{font-size:13px;font-weight:700;fill:#1f2633}
.graph .n-score{font-size:13px;font-weight:700;fill:#2f4b8f;font-variant-numeric:tabular-nums}
.graph .n-id{font:11px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;fill:#6b7385}
.graph .node.final .n-id{fill:#1d7a46;font-weight:700}
.graph .n-meta{font-size:11px;fill:#6b7385}
.graph .n-gene{font:10.5px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;fill:#3b6fd1}
.graph .model rect{fill:#f3ecfb;stroke:#b07aa1;stroke-width:1.4}
.graph .model.faded{opacity:.5}
.graph .m-kind{font-size:10px;text-transform:uppercase;letter-spacing:.08em;fill:#8a5a88}
.graph .m-name{font-size:12px;font-weight:700;fill:#4a2f57}
@media (max-width:1100px){.kpis{grid-template-columns:repeat(4,1fr)}.panels{grid-template-columns:1fr}}
"""
