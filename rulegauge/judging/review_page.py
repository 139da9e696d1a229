"""The review page of generated questions: one self-contained HTML document (no external URL).

It asks for the reviewer's name unless the URL carries ``?judge=ID``, then shows one
proposal at a time: its page and heading path, the question and the answer sentence in
editable fields, and the page's text with the answer sentence marked. Keys (outside the
fields): **a** accept, **r** reject, **e** edit (puts the cursor in the question field),
**s** skip; in a field, **Enter** in the question or **Ctrl+Enter** in the answer saves
the edit. Progress (decided of total, accepted / edited / rejected, time per decision)
below. Everything comes from the server's JSON API (:mod:`rulegauge.judging.server`); the
element ids are what the browser test drives.
"""

from __future__ import annotations

from rulegauge.judging.page import BASE_STYLE, SCRIPT_HELPERS, SCRIPT_START

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>rulegauge review</title>
<style>
BASE_STYLE
#question { width: 100%; font-size: 1.2em; font-weight: 600; }
#answer { width: 100%; height: 4.5em; font: inherit; }
</style></head>
<body>
<div id="who" hidden>
  <label>Your name (reviewer id): <input id="judge-name" autocomplete="off"></label>
  <button id="start">Start reviewing</button>
</div>
<div id="work" hidden>
  <div class="meta">reviewer <b id="judge"></b> &middot; <span id="progress"></span></div>
  <div class="meta" id="item-id"></div>
  <div class="meta" id="heading"></div>
  <p><label class="meta" for="question">question</label><br><input id="question"></p>
  <p><label class="meta" for="answer">answer sentence (copied from the page)</label><br>
  <textarea id="answer"></textarea></p>
  <p><button id="accept">a accept</button><button id="edit">e / Enter save edit</button>
  <button id="reject">r reject</button><button id="skip">s skip</button></p>
  <div id="text"></div>
  <div class="meta" id="timing"></div>
</div>
<div id="finished" hidden><p>Every proposal is decided. Thank you.</p></div>
<p class="meta" id="error"></p>
<script>
"use strict";
const params = new URLSearchParams(location.search);
const judge = params.get("judge");
let item = null, shownAt = 0, busy = false;
SCRIPT_HELPERS
function show(state) {
  const pr = state.progress;
  $("progress").textContent = pr.done + " of " + pr.total + " decided (" + pr.accept +
      " accepted, " + pr.edit + " edited, " + pr.reject + " rejected" +
      (pr.skipped ? ", " + pr.skipped + " skipped" : "") + ")";
  $("timing").textContent = "mean " + fmt(pr.mean_seconds) + ", median " +
      fmt(pr.median_seconds) + " per decision";
  item = state.item;
  if (!item) { $("work").hidden = true; $("finished").hidden = false; return; }
  $("item-id").textContent = item.proposal_id + " \\u00b7 " + item.page + " \\u00b7 " +
      item.language + " \\u00b7 " + item.rule + " \\u00b7 proposal " + (item.index + 1) +
      " of " + pr.total;
  $("heading").textContent = item.heading.join(" \\u203a ");
  $("question").value = item.question;
  $("answer").value = item.answer;
  const t = item.text;
  $("text").innerHTML = esc(t.slice(0, item.start)) + "<mark>" +
      esc(t.slice(item.start, item.end)) + "</mark>" + esc(t.slice(item.end));
  shownAt = performance.now();
}
async function send(path, extra) {
  if (!item || busy) { return; }
  busy = true;
  try {
    show(await api(path, Object.assign({judge: judge, proposal_id: item.proposal_id,
                                        seconds: (performance.now() - shownAt) / 1000}, extra)));
    $("error").textContent = "";
    document.activeElement.blur();
  } catch (e) { $("error").textContent = "error: " + e.message; }
  busy = false;
}
const decide = (d) => send("/api/decide", {decision: d, question: $("question").value,
                                             answer: $("answer").value});
const fields = () => [$("question"), $("answer"), $("judge-name")];
document.addEventListener("keydown", (ev) => {
  if (!judge) { return; }
  if (ev.target === $("question") && ev.key === "Enter") { ev.preventDefault(); decide("edit"); }
  else if (ev.target === $("answer") && ev.key === "Enter" && ev.ctrlKey) {
    ev.preventDefault(); decide("edit"); }
  if (fields().includes(ev.target)) { return; }
  if (ev.key === "a") { decide("accept"); }
  else if (ev.key === "r") { decide("reject"); }
  else if (ev.key === "s") { send("/api/skip", {}); }
  else if (ev.key === "e") { ev.preventDefault(); $("question").focus(); }
});
$("accept").onclick = () => decide("accept");
$("edit").onclick = () => decide("edit");
$("reject").onclick = () => decide("reject");
$("skip").onclick = () => send("/api/skip", {});
SCRIPT_START
</script></body></html>
"""


def render() -> str:
    """The review page's HTML."""
    return (PAGE.replace("SCRIPT_HELPERS\n", SCRIPT_HELPERS).replace("SCRIPT_START\n", SCRIPT_START)
            .replace("BASE_STYLE\n", BASE_STYLE))
