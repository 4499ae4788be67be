"""The UI's one script, served as /static/ui.js (the pages carry no inline script: the CSP forbids it).

It follows the page's server-sent events and applies each patch: ``replace`` (id → HTML to put
in place), ``prepend`` (id → rows to add on top; the element's ``data-max`` bounds how many it
keeps, so a page open for hours holds a bounded table). It also sorts tables by a clicked
header and filters rows by the toolbar's controls, again after every patch. The HTML it inserts
is rendered and escaped by the server; the script never builds markup from data itself.
"""

UI_JS = r"""
(function () {
  "use strict";
  function setState(text, cls) {
    var el = document.getElementById("live-state");
    if (!el) return;
    el.className = "live " + cls;
    el.lastElementChild.textContent = text;
  }
  function applyPatch(p) {
    var r = p.replace || {}, a = p.prepend || {};
    Object.keys(r).forEach(function (id) {
      var el = document.getElementById(id);
      if (!el) return;
      var keep = el.tagName === "SELECT" ? el.value : null;
      el.innerHTML = r[id];
      if (keep !== null) el.value = keep;
    });
    Object.keys(a).forEach(function (id) {
      var el = document.getElementById(id);
      if (!el) return;
      el.insertAdjacentHTML("afterbegin", a[id]);
      var max = parseInt(el.getAttribute("data-max") || "0", 10);
      while (max && el.children.length > max) el.removeChild(el.lastElementChild);
    });
    if (p.seq !== undefined) document.body.setAttribute("data-seq", String(p.seq));
    document.querySelectorAll("table[data-sort-col]").forEach(sortTable);
    refilter();
  }
  function follow() {
    var url = document.body.getAttribute("data-live");
    if (!url || !window.EventSource) return;
    var after = document.body.getAttribute("data-seq") || "0";
    var es = new EventSource(url + (url.indexOf("?") < 0 ? "?" : "&") + "after=" + encodeURIComponent(after));
    es.addEventListener("patch", function (e) { applyPatch(JSON.parse(e.data)); });
    es.onopen = function () { setState("live", "on"); };
    es.onerror = function () { setState("reconnecting…", "off"); };
  }
  function cellValue(row, col) {
    var cell = row.children[col];
    if (!cell) return "";
    var v = cell.getAttribute("data-v");
    return v === null ? cell.textContent.trim() : v;
  }
  function sortTable(table) {
    var col = parseInt(table.getAttribute("data-sort-col"), 10), dir = table.getAttribute("data-sort-dir") === "desc" ? -1 : 1;
    var body = table.tBodies[0];
    if (!body) return;
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (x, y) {
      var a = cellValue(x, col), b = cellValue(y, col), fa = Number(a), fb = Number(b);
      if (a !== "" && b !== "" && !isNaN(fa) && !isNaN(fb)) return (fa - fb) * dir;
      return a.localeCompare(b) * dir;
    });
    rows.forEach(function (row) { body.appendChild(row); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      th.classList.remove("sorted-asc", "sorted-desc");
      if (i === col) th.classList.add(dir > 0 ? "sorted-asc" : "sorted-desc");
    });
  }
  function refilter() {
    var byTarget = {};
    document.querySelectorAll("[data-filter]").forEach(function (c) {
      (byTarget[c.getAttribute("data-filter")] = byTarget[c.getAttribute("data-filter")] || []).push(c);
    });
    Object.keys(byTarget).forEach(function (id) {
      var body = document.getElementById(id);
      if (!body) return;
      Array.prototype.forEach.call(body.children, function (row) {
        var show = byTarget[id].every(function (c) {
          var want = c.value, attr = c.getAttribute("data-attr");
          if (!want) return true;
          if (attr) return row.getAttribute("data-" + attr) === want;
          return row.textContent.toLowerCase().indexOf(want.toLowerCase()) >= 0;
        });
        row.style.display = show ? "" : "none";
      });
    });
  }
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("table[data-sortable] th[data-col]").forEach(function (th) {
      th.classList.add("sortable");
      th.addEventListener("click", function () {
        var table = th.closest("table"), col = th.getAttribute("data-col");
        var dir = table.getAttribute("data-sort-col") === col && table.getAttribute("data-sort-dir") === "asc" ? "desc" : "asc";
        table.setAttribute("data-sort-col", col);
        table.setAttribute("data-sort-dir", dir);
        sortTable(table);
      });
    });
    document.querySelectorAll("[data-filter]").forEach(function (c) {
      c.addEventListener("input", refilter);
      c.addEventListener("change", refilter);
    });
    refilter();
    follow();
  });
})();
"""
