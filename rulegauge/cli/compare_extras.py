"""What ``rulegauge compare`` prints beside the comparison: the overlap of the two runs'
lists (RBO, Jaccard) and each slice's own comparison, in every format.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text


def print_extras(console: Any, overlaps: Any, notes: Any, sliced: Any) -> None:
    """The overlap table (and why a pair has none), then each slice's comparison."""
    from rulegauge.regression.gate_report import comparison_renderables
    from rulegauge.regression.slice_report import overlap_table

    if overlaps:
        console.print(overlap_table(overlaps))
    for note in notes:
        console.print(Text(f"overlap not measured: {note}"))
    for s in sliced:
        console.print(Text(f"\nslice {s.name} ({s.selector}): {len(s.questions)} questions",
                           style="bold"))
        console.print(*comparison_renderables(s.comparison), sep="\n")


def markdown_extras(overlaps: Any, notes: Any, sliced: Any) -> list[str]:
    """The overlap table and each slice's comparison, in Markdown."""
    from rulegauge.regression.gate_report import comparison_markdown
    from rulegauge.regression.slice_report import overlap_markdown

    out = overlap_markdown(overlaps, notes)
    out = ["", *out, ""] if out else []
    for s in sliced:
        out += [f"## Slice {s.name} ({s.selector}): {len(s.questions)} questions", "",
                comparison_markdown(s.comparison).replace("## Comparison\n", "", 1)]
    return out


def json_with_extras(comparison: Any, overlaps: Any, notes: Any, sliced: Any) -> str:
    """The comparison's JSON with ``overlap``, ``overlap_notes`` and ``slices`` added."""
    import json

    from rulegauge.regression.gate_report import to_jsonable

    d = to_jsonable(comparison)
    d.update(overlap=to_jsonable(overlaps), overlap_notes=list(notes), slices=to_jsonable(sliced))
    return json.dumps(d, indent=2, ensure_ascii=False, allow_nan=False)
