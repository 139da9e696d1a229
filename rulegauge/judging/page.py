"""The judging page: one self-contained HTML document (inline CSS and script, no external URL).

It asks for the judge's name unless the URL carries ``?judge=ID``, then shows one
pooled page at a time: the question, the page text with the question's terms marked,
the gold pages already listed (for reference, folded), which configs and arms found
the page (only in the unblinded view: blind, the page is told nothing of them), a note
field, and the keys **0 1 2 3** (grade), **s** (skip). Below:
progress (judged of total, time on this page, mean and median time per judgment) and,
when several people judge the pool, their agreement and disagreements. Everything the
page shows comes from the server's JSON API (:mod:`rulegauge.judging.server`); the
element ids are what the browser test drives.
"""

from __future__ import annotations

SCRIPT_HELPERS = """const $ = (id) => document.getElementById(id);
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;",
                                                         '"': "&quot;", "'": "&#39;"}[c]));
function fmt(x) { return x === null || x === undefined ? "-" : x.toFixed(1) + " s"; }
const token = (document.querySelector('meta[name="rulegauge-token"]') || {}).content || "";
async function api(path, body) {
  const opts = body ? {method: "POST", headers: {"Content-Type": "application/json",
                                                 "X-Rulegauge-Token": token},
                       body: JSON.stringify(body)} : {};
  const r = await fetch(path, opts);
  const data = await r.json();
  if (!r.ok) { throw new Error(data.error || r.statusText); }
  return data;
}
"""
"""Script both pages share (the review page too): $, esc, fmt and the JSON API call, which
sends the page's token (``<meta name="rulegauge-token">``, :func:`rulegauge.core.localserver.with_token`)
with every change, as JSON."""

SCRIPT_START = """$("start").onclick = () => {
  const name = $("judge-name").value.trim();
  if (name) { location.search = "?judge=" + encodeURIComponent(name); }
};
if (!judge) { $("who").hidden = false; }
else {
  $("judge").textContent = judge;
  $("work").hidden = false;
  api("/api/state?judge=" + encodeURIComponent(judge)).then(show)
    .catch((e) => { $("error").textContent = "error: " + e.message; });
}
"""
"""How both pages start: ask for a name without ?judge=, else load the first state."""

BASE_STYLE = """body { font: 15px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 60em; color: #222; }
#text { white-space: pre-wrap; border: 1px solid #ccc; padding: .8em; background: #fcfcf8; }
mark { background: #ffe47a; }
.meta { color: #666; font-size: .9em; }
button { font-size: 1em; margin: .2em .3em .2em 0; padding: .3em .8em; }
"""
"""Style both pages share."""

GRADE_LABELS = ("0 not relevant", "1 related", "2 partly answers", "3 answers it")

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>rulegauge judge</title>
<style>
BASE_STYLE
#question { font-size: 1.25em; font-weight: 600; margin: .3em 0 .6em; }
#note { width: 100%; }
table { border-collapse: collapse; } td, th { border: 1px solid #ddd; padding: .2em .5em; }
.gold { white-space: pre-wrap; font-size: .9em; color: #444; }
</style></head>
<body>
<div id="who" hidden>
  <label>Your name (judge id): <input id="judge-name" autocomplete="off"></label>
  <button id="start">Start judging</button>
</div>
<div id="work" hidden>
  <div class="meta">judge <b id="judge"></b> &middot; <span id="progress"></span> &middot;
  <span id="view"></span></div>
  <div class="meta" id="item-id"></div>
  <div id="question"></div>
  <div class="meta" id="found-by" hidden></div>
  <div id="text"></div>
  <details id="gold-box"><summary>gold pages already listed (<span id="gold-count">0</span>)
  </summary><div id="gold"></div></details>
  <p><input id="note" placeholder="note (optional)"></p>
  <p id="grades">GRADE_BUTTONS<button id="skip">s skip</button></p>
  <div class="meta" id="timing"></div>
</div>
<div id="finished" hidden><p>Every page of this pool is judged. Thank you.</p></div>
<p class="meta" id="error"></p>
<h3>Agreement</h3><div id="agreement" class="meta">one judge so far</div>
<script>
"use strict";
const params = new URLSearchParams(location.search);
const judge = params.get("judge");
let item = null, shownAt = 0, busy = false;
SCRIPT_HELPERS
function showAgreement(a) {
  if (!a || a.judges.length < 2) { $("agreement").textContent = "one judge so far"; return; }
  let h = "<table id='kappa'><tr><th>judges</th><th>shared pages</th><th>agreement</th>" +
          "<th>Cohen's kappa</th></tr>";
  const mark = (j) => a.llm_judges.includes(j) ? j + " [llm]" : j;
  for (const p of a.pairs) {
    h += "<tr><td>" + esc(p.judges.map(mark).join(" / ")) + "</td><td>" + p.items + "</td><td>" +
         (p.agreement === null ? "-" : p.agreement.toFixed(3)) + "</td><td class='kappa'>" +
         (p.kappa === null ? "undefined" : p.kappa.toFixed(3)) + "</td></tr>";
  }
  h += "</table><p>Fleiss' kappa: <span id='fleiss'>" +
       (a.fleiss === null ? "undefined" : a.fleiss.toFixed(3)) + "</span></p>";
  h += "<p>disagreements: <span id='n-disagreements'>" + a.disagreements.length + "</span></p><ul>";
  for (const d of a.disagreements) {
    const g = Object.entries(d.grades).map(([k, v]) => k + " " + v).join(", ");
    h += "<li class='disagreement'>" + esc(d.question_id + " " + d.page + ": " + g) + "</li>";
  }
  $("agreement").innerHTML = h + "</ul>";
}
function show(state) {
  const pr = state.progress;
  $("progress").textContent = pr.done + " of " + pr.total + " judged" +
      (pr.skipped ? ", " + pr.skipped + " skipped" : "");
  $("timing").textContent = "mean " + fmt(pr.mean_seconds) + ", median " +
      fmt(pr.median_seconds) + " per judgment";
  showAgreement(state.agreement);
  item = state.item;
  if (!item) { $("work").hidden = true; $("finished").hidden = false; return; }
  $("item-id").textContent = item.question_id + " \\u00b7 " + item.page + " \\u00b7 page " +
      (item.index + 1) + " of " + pr.total;
  $("question").textContent = item.question;
  $("view").textContent = state.view.name === "blind"
      ? "blind: pages in random order (seed " + state.view.seed + "), systems hidden"
      : "unblinded: pool order, finders shown";
  $("found-by").hidden = !item.found_by;
  $("found-by").textContent = item.found_by ? "found by " + item.found_by.join(", ") : "";
  $("text").innerHTML = item.html;
  $("gold-count").textContent = item.gold.length;
  $("gold").innerHTML = item.gold.map((g) => "<p><b>" + esc(g.page) + "</b> (grade " + g.grade +
      ")</p><div class='gold'>" + g.html + "</div>").join("");
  $("note").value = "";
  shownAt = performance.now();
}
async function send(path, extra) {
  if (!item || busy) { return; }
  busy = true;
  try {
    show(await api(path, Object.assign({judge: judge, question_id: item.question_id,
                                        page: item.page}, extra)));
    $("error").textContent = "";
  } catch (e) { $("error").textContent = "error: " + e.message; }
  busy = false;
}
function grade(g) {
  send("/api/judge", {grade: g, note: $("note").value,
                      seconds: (performance.now() - shownAt) / 1000});
}
document.addEventListener("keydown", (ev) => {
  if (!judge || ev.target === $("note") || ev.target === $("judge-name")) { return; }
  if ("0123".includes(ev.key) && ev.key.length === 1) { grade(Number(ev.key)); }
  else if (ev.key === "s") { send("/api/skip", {}); }
});
for (let g = 0; g < 4; g++) { $("grade-" + g).onclick = () => grade(g); }
$("skip").onclick = () => send("/api/skip", {});
SCRIPT_START
</script></body></html>
"""


def render() -> str:
    """The page's HTML (the grade buttons filled in)."""
    buttons = "".join(f'<button id="grade-{i}">{label}</button>'
                      for i, label in enumerate(GRADE_LABELS))
    return PAGE.replace("GRADE_BUTTONS", buttons).replace("SCRIPT_HELPERS\n", SCRIPT_HELPERS).replace(
        "SCRIPT_START\n", SCRIPT_START).replace("BASE_STYLE\n", BASE_STYLE)
