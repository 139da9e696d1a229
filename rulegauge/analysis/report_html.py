"""HTML building blocks of the report: page CSS and script, images, tables, the headline.

The page is responsive: one column whose figures are at most their natural size and
never wider than the window (``max-width: 100%``), small multiples in a grid that
puts them side by side at 1400 px and one per row at 390 px, wide tables scrolling
inside their own box, long ids allowed to wrap. Chart text stays readable on a phone: a
figure never shrinks below the width at which its smallest label is :data:`READABLE_PX`
(its ``min-width``; :func:`label_px` measures the label at natural size, kept in
``data-label-px``), and a figure wider than the window scrolls inside its own box. The one inline script sorts a
table by the clicked header: numbers numerically, text in natural order (``k6``
before ``k10``), blanks last.

Headline conventions: configs whose aggregate equals the best one's
(:func:`rulegauge.metrics.selection.ties_with`) are named together as a tie; with the
best config's stability, the card says how often it stays best over bootstrap resamples
of questions and "best, or tied with N others" when configs are statistically tied with
it; a paired difference that the multiplicity rule does not flag (its adjusted p-value is
not below alpha, :mod:`rulegauge.metrics.multiplicity`, the gate's rule) is printed plain
with "not significant" (only a flagged difference is shown in bold).
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Sequence

import pandas as pd
from matplotlib.figure import Figure

from rulegauge.analysis.headline import Headline

__all__ = ["CSS", "JS", "READABLE_PX", "figure_grid", "headline_html", "img", "is_significant",
           "label_px", "num", "png_base64", "shown_label_px", "table_html"]

CSS = """*{box-sizing:border-box}body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;
max-width:1360px;padding:12px 16px;color:#222;overflow-wrap:anywhere}h1{font-size:22px}
h2{font-size:18px;margin-top:1.6em;border-bottom:1px solid #ddd}
.scroll{overflow-x:auto;max-width:100%}table{border-collapse:collapse;font-size:12px;
margin:.4em 0 1.2em}th,td{border:1px solid #ccc;padding:2px 6px;text-align:right;
white-space:nowrap;overflow-wrap:normal}th{background:#f2f2f2;cursor:pointer;user-select:none;
position:sticky;top:0}th[data-dir=asc]::after{content:" ▲"}th[data-dir=desc]::after{content:" ▼"}
td:first-child,th:first-child{text-align:left}img,svg{max-width:100%;height:auto;display:block;
margin:.4em 0}.fig{overflow-x:auto;max-width:100%;min-width:0}
.note{color:#555;max-width:70em}.cards{display:flex;flex-wrap:wrap;gap:12px}
.card{border:1px solid #ddd;border-radius:6px;padding:8px 14px;flex:1 1 15em;max-width:32em}
.card b{font-size:20px;display:block}.card b.ns{font-weight:normal}.ns-tag{color:#8a6d00}
.svc{color:#d1495b}details{margin:.5em 0}summary{cursor:pointer;color:#264653}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,330px),1fr));gap:8px}
.grid img{margin:0 auto}.answer pre{white-space:pre-wrap;margin:.2em 0}
.cite{margin-right:.6em;font-size:12px}.cite.right,tr.right td{color:#2a7f3f}
.cite.wrong{color:#d1495b}.tall{max-height:70vh;overflow:auto}
@media (max-width:600px){body{padding:8px}h1{font-size:18px}.card{max-width:none}}"""
# sort a table by the clicked header: numbers numerically, text in natural order, blanks last
JS = """document.querySelectorAll('table.sortable th').forEach(th=>th.onclick=()=>{
const t=th.closest('table'),b=t.tBodies[0],i=[...th.parentNode.cells].indexOf(th),
up=th.dataset.dir!=='asc';t.querySelectorAll('th').forEach(h=>delete h.dataset.dir);
th.dataset.dir=up?'asc':'desc';const key=r=>{const s=(r.cells[i]||{}).textContent||'';
const v=s.trim(),n=Number(v);return v===''||v==='-'?[2,'']:isNaN(n)?[1,v]:[0,n]};
const cmp=(a,c)=>a[0]-c[0]||(a[0]?String(a[1]).localeCompare(c[1],undefined,{numeric:true}):
a[1]-c[1]);[...b.rows].sort((x,y)=>cmp(key(x),key(y))*(up?1:-1)).forEach(r=>b.appendChild(r))});"""


def png_base64(fig: Figure) -> str:
    """The figure as a base64 PNG string (100 dpi: inches x 100 = pixels), reduced to
    an adaptive 256-colour palette (charts have few colours; a third of the bytes)."""
    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    buf.seek(0)
    with Image.open(buf) as im:
        small = im.convert("RGB").convert("P", palette=Image.Palette.ADAPTIVE, colors=256)
    out = io.BytesIO()
    small.save(out, format="png", optimize=True)
    return base64.b64encode(out.getvalue()).decode("ascii")


READABLE_PX = 9.0
"""The smallest label size (CSS px) a figure may be shown at: the report's table text is 12 px."""


def label_px(fig: Figure) -> float:
    """The smallest font size of the figure's visible text, in px at natural size (100 dpi;
    the figure drawn first, so tick labels are set); 0.0 when it has no text."""
    from matplotlib.text import Text

    sizes = [float(t.get_fontsize()) for t in fig.findobj(Text)
             if t.get_visible() and t.get_text().strip() and t.figure is fig]
    return min(sizes) * 100.0 / 72.0 if sizes else 0.0


def shown_label_px(natural_px: float, width: int, min_width: int, room: float) -> float:
    """The smallest label's size when a figure ``width`` px wide (CSS ``min-width``
    ``min_width``) is shown in ``room`` px: ``max-width: 100%``, but never below its
    ``min-width`` (CSS: min-width wins)."""
    shown = max(float(min_width), min(float(width), room))
    return natural_px * shown / width


def img(fig: Figure, alt: str) -> str:
    """An ``<img>`` with the figure inline as a PNG data URL, at its natural size at most,
    never below the width where its smallest label is :data:`READABLE_PX` (in a box that
    scrolls sideways when the window is narrower: module docstring)."""
    w, h = (round(x * 100) for x in fig.get_size_inches())
    data = png_base64(fig)  # draws the figure: tick labels exist from here on
    px = label_px(fig)
    min_w = w if px <= 0 else min(w, math.ceil(w * READABLE_PX / px))
    return (f'<div class="fig"><img alt="{html.escape(alt)}" width="{w}" height="{h}" '
            f'style="min-width:{min_w}px" data-label-px="{px:.2f}" '
            f'src="data:image/png;base64,{data}"></div>')


def figure_grid(images: Sequence[str], min_px: int = 330) -> str:
    """Small multiples: side by side where the window allows (columns at least
    ``min_px`` wide), one per row on a phone."""
    style = "" if min_px == 330 else (f" style='grid-template-columns:repeat(auto-fill,"
                                      f"minmax(min(100%,{min_px}px),1fr))'")
    return f"<div class='grid'{style}>" + "".join(images) + "</div>"


def table_html(df: pd.DataFrame, *, tall: bool = False) -> str:
    """A sortable table in its own horizontal scroll box (``tall``: vertical too)."""
    body = df.to_html(index=False, border=0, na_rep="-", classes="sortable",
                      float_format=lambda x: f"{x:.4g}")
    return f"<div class='scroll{' tall' if tall else ''}'>{body}</div>"


def num(x: float, digits: int = 3, *, sign: bool = False) -> str:
    """``x`` rounded for print; ``-`` when not finite."""
    return "-" if not math.isfinite(x) else f"{x:{'+' if sign else ''}.{digits}f}"


def is_significant(lo: float, hi: float) -> bool:
    """True when the interval ``[lo, hi]`` is finite and excludes 0 (an interval's own
    story; the report's ``significant`` is the multiplicity rule's flag)."""
    return math.isfinite(lo) and math.isfinite(hi) and (lo > 0 or hi < 0)


def _stability_line(h: Headline) -> str:
    st = h.stability
    if st is None:
        return ""
    ties = (f"best, or tied with {len(st.tied)} other(s): {', '.join(st.tied[:6])}"
            f"{' …' if len(st.tied) > 6 else ''}" if st.tied else "no config is statistically tied with it")
    return (f"<br>stays best in {st.stays_best:.0%} of {st.n_resamples} bootstrap resamples of "
            f"questions (alone at the top in {st.sole_best:.0%}); {html.escape(ties)} "
            f"<span class='note'>({html.escape(st.rule)})</span>")


def headline_html(h: Headline, tied: Sequence[str] = ()) -> str:
    """The headline cards: best (or the tie at the top, or "best, or tied with N others"
    when its stability shows statistical ties), the service config and their paired
    difference, "not significant" when the multiplicity rule does not flag it."""
    e = html.escape
    method = f"fusion method {h.method}: " if h.method else ""
    tied = tuple(tied) or (h.best,)
    stable = _stability_line(h)
    if len(tied) > 1:
        best = (f"tie of {len(tied)} configs at {num(h.best_value)}: "
                f"{', '.join(tied[:6])}{' …' if len(tied) > 6 else ''}")
        cards = [f"<div class='card'>best on {e(h.metric)} (tie)<b>{num(h.best_value)}</b>"
                 f"{e(best)}{stable}</div>"]
    else:
        label = "best" if h.stability is None or not h.stability.tied else (
            f"best, or tied with {len(h.stability.tied)} others,")
        cards = [f"<div class='card'>{e(label)} on {e(h.metric)}<b>{num(h.best_value)}</b>"
                 f"{e(method + h.best)}{stable}</div>"]
    if h.service is None:
        cards.append("<div class='card'>service config<b>-</b>no config of this run is "
                     "rrf k=60 over bm25+dense+boost with weights 1</div>")
        return "<div class='cards'>" + "".join(cards) + "</div>"
    cards.append(f"<div class='card svc'>service config<b>{num(h.service_value)}</b>"
                 f"{e(h.service)}</div>")
    if h.best == h.service or h.service in tied:
        verdict = ("The service config is the best config of this run." if len(tied) == 1 else
                   f"The service config ties for best with {len(tied) - 1} other config(s).")
        cards.append(f"<div class='card'>difference<b class='ns'>{num(0.0, 3, sign=True)}</b>"
                     f"{e(verdict)}</div>")
        return "<div class='cards'>" + "".join(cards) + "</div>"
    sig = h.significant
    who = "best" if len(tied) == 1 else f"best (any of the {len(tied)} tied)"
    family = f", {h.family}" if h.family else ""
    size = "" if math.isnan(h.moe) else (f", mean ± {num(h.moe, 3)} (95% t), d_z "
                                          f"{'n/a' if math.isnan(h.d_z) else num(h.d_z, 2)}")
    verdict = (f"{who} - service: {num(h.diff, 3, sign=True)} (95% BCa CI {num(h.ci_lo, 3, sign=True)} "
               f"to {num(h.ci_hi, 3, sign=True)}{size}, p = {num(h.p_value)}, adjusted p = "
               f"{num(h.p_adjusted)}{family}; better on {h.wins}, "
               f"worse on {h.losses}, tied on {h.ties} of {h.n} questions)")
    tag = "" if sig else ("<span class='ns-tag'> not significant (adjusted p not below alpha"
                          f"{e(family)})</span>")
    cards.append(f"<div class='card'>difference{tag}<b{'' if sig else ' class=ns'}>"
                 f"{num(h.diff, 3, sign=True)}</b>{e(verdict)}</div>")
    return "<div class='cards'>" + "".join(cards) + "</div>"
