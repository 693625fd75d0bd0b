"""The report page's fixed parts: CSS, the script and the colours (no network, no CDN).

The script only reads the page's JSON (``<script type="application/json">``, parsed with
``JSON.parse``) and writes conversation text with ``textContent``: nothing from the
conversation is ever parsed as HTML or run.
"""

from __future__ import annotations

#: Fill colour of each kind (see ``_html_data.KINDS``).
COLOURS: dict[str, str] = {
    "system": "#6b7280",
    "user": "#2563eb",
    "assistant": "#16a34a",
    "thinking": "#a855f7",
    "tool_call": "#0891b2",  # cyan: far from the result's orange and the assistant's green
    "tool_result": "#ea580c",
    "image": "#db2777",
}
LABELS: dict[str, str] = {
    "system": "system",
    "user": "user",
    "assistant": "assistant text",
    "thinking": "thinking",
    "tool_call": "tool call",
    "tool_result": "tool result",
    "image": "image",
}

CSS = """
:root { --row: 26px; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0;
  color: #111827; background: #f9fafb; }
header, main { padding: 12px 20px; }
header { background: #111827; color: #f9fafb; }
header h1 { font-size: 18px; margin: 0 0 4px; }
header .meta { color: #d1d5db; font-size: 13px; }
h2 { font-size: 15px; margin: 18px 0 8px; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin: 10px 0; }
.card { background: #fff; border: 1px solid #e5e7eb; border-radius: 6px; padding: 8px 12px;
  min-width: 140px; }
.card .v { font-size: 20px; font-weight: 600; }
.card .k { color: #6b7280; font-size: 12px; }
.explain { background: #fff; border-left: 4px solid #2563eb; padding: 8px 12px; margin: 10px 0; }
.explain.miss { border-left-color: #dc2626; }
.legend { display: flex; flex-wrap: wrap; gap: 12px; font-size: 12px; margin: 6px 0 10px; }
.legend span { display: inline-flex; align-items: center; gap: 5px; }
.sw { width: 14px; height: 14px; border-radius: 2px; display: inline-block; }
.sides { display: grid; grid-template-columns: 1fr 1fr; gap: 16px; }
.sides.one { grid-template-columns: 1fr; }
.side h3 { font-size: 14px; margin: 4px 0; }
.strip { background: #fff; border: 1px solid #d1d5db; }
.row { display: flex; height: var(--row); }
.row > .u, .row > .rest { position: relative; flex: 0 0 0; }
.u { height: calc(var(--row) - 3px); cursor: pointer;
  box-shadow: inset -1px 0 0 rgba(255, 255, 255, .9); }
.u:hover, .u.hl { outline: 2px solid #111827; z-index: 2; }
.u.prot::before { content: ""; position: absolute; left: 0; right: 0; top: 0; height: 5px;
  background: repeating-linear-gradient(45deg, #111827 0 3px, #fde047 3px 6px); }
.u.s-dropped::after, .u.s-changed::after, .u.s-added::after { content: ""; position: absolute;
  inset: 0; pointer-events: none; }
/* a veil, not opacity: a tick drawn inside a dropped piece stays fully visible */
.u.s-dropped::after { background: repeating-linear-gradient(-45deg, transparent 0 4px,
  rgba(0, 0, 0, .16) 4px 6px), linear-gradient(rgba(255, 255, 255, .72),
  rgba(255, 255, 255, .72)); }
.u.s-changed::after { border: 2px solid #dc2626; }
.u.s-added::after { border: 2px dashed #111827; }
.tick { position: absolute; top: 0; width: 0; border-left: 2px solid #dc2626;
  height: var(--row); z-index: 3; pointer-events: none; }
.tick.target { border-left-color: #2563eb; }
.tick span { position: absolute; top: -15px; left: 2px; font-size: 10px; white-space: nowrap;
  color: #dc2626; background: rgba(255, 255, 255, .9); padding: 0 2px; }
.tick.target span { color: #2563eb; }
.gauge { position: relative; background: #fff; border: 1px solid #e5e7eb; padding: 20px 0; }
.bar { position: relative; height: 20px; margin: 4px 0; }
.bar .fill { position: absolute; left: 200px; height: 100%; background: #9ca3af; }
.bar .fill.saved { background: #fca5a5; }
.bar .lbl { position: absolute; left: 6px; width: 190px; font-size: 12px; overflow: hidden;
  white-space: nowrap; text-overflow: ellipsis; line-height: 20px; }
.bar .num { position: absolute; font-size: 11px; line-height: 20px; padding-left: 4px;
  white-space: nowrap; }
.line { position: absolute; top: 0; bottom: 0; border-left: 2px dashed #dc2626; z-index: 1; }
.line.target { border-left-color: #2563eb; }
.line span { position: absolute; bottom: 3px; left: 3px; font-size: 10px; background: #fff;
  white-space: nowrap; }
.line.target span { bottom: auto; top: 3px; }
.tick.target span { top: auto; bottom: -13px; }
table { border-collapse: collapse; background: #fff; font-size: 13px; }
th, td { border: 1px solid #e5e7eb; padding: 3px 8px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
pre { white-space: pre-wrap; word-break: break-word; margin: 2px 0; font-size: 12px; }
.markers pre { background: #fff; border: 1px solid #e5e7eb; padding: 6px; }
#tip { position: fixed; display: none; max-width: 560px; max-height: 70vh; overflow: hidden;
  background: #111827; color: #f9fafb; padding: 8px 10px; border-radius: 6px; z-index: 10;
  font-size: 12px; pointer-events: none; box-shadow: 0 4px 16px rgba(0, 0, 0, .3); }
#tip .h { font-weight: 600; margin-bottom: 4px; }
#tip .m { border-top: 1px solid #374151; padding-top: 4px; margin-top: 4px; }
#tip .mk { color: #fde68a; }
#tip pre { color: #e5e7eb; }
.note { color: #6b7280; font-size: 12px; }
"""

SCRIPT = """
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var tip = document.getElementById("tip");
  var labels = data.labels;
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }
  function n(v) { return v.toLocaleString("en-US"); }
  function unitOf(node) {
    var side = {b: data.before, a: data.after}[node.getAttribute("data-side")];
    return side ? side.units[Number(node.getAttribute("data-n"))] : null;
  }
  function show(u, x, y) {
    tip.replaceChildren();
    var head = u.label + " \\u00b7 " + (u.round ? "tool round" : "message") + " \\u00b7 " +
      n(u.tokens) + " tokens \\u00b7 " + u.status;
    if (u.steps.length) { head += " (" + u.steps.join(", ") + ")"; }
    tip.appendChild(el("div", "h", head));
    if (u.protected) {
      tip.appendChild(el("div", null, "protected: " + u.reasons.join(", ")));
    }
    tip.appendChild(el("div", null, u.kinds.map(function (k) {
      return labels[k[0]] + " " + n(k[1]);
    }).join(" \\u00b7 ")));
    var shown = u.messages.slice(0, 6);
    shown.forEach(function (m) {
      var box = el("div", "m");
      var where = m.index === null ? "new message" : "message " + m.index + " in the file";
      box.appendChild(el("div", null, where + " \\u00b7 " + m.role + " \\u00b7 " +
        n(m.tokens) + " tokens \\u00b7 " + m.status +
        (m.steps.length ? " (" + m.steps.join(", ") + ")" : "")));
      if (m.preview) { box.appendChild(el("pre", null, m.preview)); }
      m.markers.forEach(function (t) { box.appendChild(el("pre", "mk", t)); });
      tip.appendChild(box);
    });
    if (u.messages.length > shown.length) {
      tip.appendChild(el("div", "m", "\\u2026 " + (u.messages.length - shown.length) +
        " more messages"));
    }
    tip.style.display = "block";
    place(x, y);
  }
  function place(x, y) {
    var w = tip.offsetWidth, h = tip.offsetHeight;
    var left = x + 14, top = y + 14;
    if (left + w > window.innerWidth - 4) { left = Math.max(4, x - w - 14); }
    if (top + h > window.innerHeight - 4) { top = Math.max(4, window.innerHeight - h - 4); }
    tip.style.left = left + "px";
    tip.style.top = top + "px";
  }
  function pieces(node, on) {
    var sel = '.u[data-side="' + node.getAttribute("data-side") + '"][data-n="' +
      node.getAttribute("data-n") + '"]';
    document.querySelectorAll(sel).forEach(function (p) { p.classList.toggle("hl", on); });
  }
  document.addEventListener("mouseover", function (ev) {
    var node = ev.target.closest ? ev.target.closest(".u") : null;
    if (!node) { return; }
    var u = unitOf(node);
    if (u) { pieces(node, true); show(u, ev.clientX, ev.clientY); }
  });
  document.addEventListener("mousemove", function (ev) {
    if (tip.style.display === "block") { place(ev.clientX, ev.clientY); }
  });
  document.addEventListener("mouseout", function (ev) {
    var node = ev.target.closest ? ev.target.closest(".u") : null;
    if (node) { pieces(node, false); tip.style.display = "none"; }
  });
  document.body.setAttribute("data-ready", "1");
})();
"""
