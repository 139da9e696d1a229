"""The docs tier's extractor (:mod:`tests.helpers.docs_tier`) on pages written here."""

from __future__ import annotations

import pytest

from tests.helpers.docs_tier import MarkerError, page_blocks

pytestmark = pytest.mark.docs

PAGE = """# A page

Run it:
<!-- docs-tier: skip "rulegauge report latest --serve" (blocks) -->
<!-- docs-tier: exit 1 "rulegauge trend" -->
<!-- docs-tier: expect "ok" -->

    rulegauge run -m recall@3 \\
        -m nDCG@10                  # a comment
    RULEGAUGE_CACHE=/x rulegauge list && rulegauge validate g.yaml
    rulegauge report latest --serve --port 8765
    rulegauge trend -g sample
    some output line
    rulegauge query "select a
        from b"

Text between.

```
$ rulegauge bands latest
bands output
```
"""


def test_commands_continuations_comments_and_prompts() -> None:
    first, second = page_blocks("p.md", PAGE)
    texts = [c.text for c in first.commands]
    assert texts == ["rulegauge run -m recall@3 -m nDCG@10",
                     "RULEGAUGE_CACHE=/x rulegauge list && rulegauge validate g.yaml",
                     "rulegauge report latest --serve --port 8765", "rulegauge trend -g sample",
                     'rulegauge query "select a from b"']
    assert [c.line for c in first.commands] == [8, 10, 11, 12, 14]
    assert first.commands[1].rulegauge_argvs() == [["list"], ["validate", "g.yaml"]]
    assert [c.text for c in second.commands] == ["rulegauge bands latest"]


def test_markers_apply_to_the_commands_they_name() -> None:
    block = page_blocks("p.md", PAGE)[0]
    by_text = {c.text.split()[1]: c for c in block.commands}
    assert by_text["report"].skip == "blocks" and not by_text["run"].skip
    assert by_text["trend"].exit == 1 and by_text["run"].exit == 0
    assert block.expect == [("ok", "")]


@pytest.mark.parametrize(("marker", "message"), [
    ("<!-- docs-tier: sikp (typo) -->", "unknown docs-tier marker"),
    ('<!-- docs-tier: skip "rulegauge nope" (x) -->', "names no command of its block"),
    ('<!-- docs-tier: exit two -->', "unknown docs-tier marker"),
])
def test_a_bad_marker_is_an_error_naming_the_page_and_line(marker: str, message: str) -> None:
    with pytest.raises(MarkerError, match=message) as err:
        page_blocks("p.md", f"Intro\n{marker}\n\n    rulegauge list\n")
    assert "p.md:" in str(err.value)


def test_a_marker_above_no_code_block_is_an_error() -> None:
    with pytest.raises(MarkerError, match=r"p\.md:2: a docs-tier marker not directly above a code block"):
        page_blocks("p.md", "Intro\n<!-- docs-tier: skip (x) -->\nMore text.\n\n    rulegauge list\n")
