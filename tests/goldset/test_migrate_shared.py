"""``goldset migrate`` on a real rulebook: ../shared holds no document in two printings, so a
second version of the Secret Hitler rulebook is made at test time (in tmp, never committed)
from its own pages: a page of ours inserted, pages 4 and 5 swapped, the last 15 lines of page 3
reflowed onto the next page, pages 6 and 7 merged. No carried label may point elsewhere than
where its page's text went."""

from __future__ import annotations

import pytest

from rulegauge.corpus import loaders
from rulegauge.goldset.migrate import migrate
from rulegauge.goldset.parse import load_goldset
from tests.helpers.common import SHARED

GOLD = SHARED / "goldsets" / "secret-hitler.yaml"
# slow: the PDF's text is extracted twice (here and by migrate), about 4 s each on a loaded machine
pytestmark = [pytest.mark.shared, pytest.mark.slow,
              pytest.mark.skipif(not GOLD.is_file(), reason=f"{GOLD} is absent (this test reads ../shared)")]

INSERTED = ("A NOTE ON THIS PRINTING\nThe pages of this copy were set again for a test of the "
            "harness; nothing in the game changed. The lamps of Brackwater stay lit.\n")
REFLOWED = 15  # the last lines of page 3 go to the top of the next page
# old page -> the new pages its text may now be on (page 3's last lines moved to new 5)
TRUTH = {1: {1}, 2: {3}, 3: {4, 5}, 4: {6}, 5: {5}, 6: {7}, 7: {7}}


def test_migrate_a_reflowed_real_rulebook(tmp_path):
    gold = load_goldset(GOLD)
    _, pages = loaders.load_document(gold.documents[0])
    t = [p.text for p in pages]
    lines = t[2].rstrip().split("\n")
    head, tail = "\n".join(lines[:-REFLOWED]), "\n".join(lines[-REFLOWED:])
    new = [t[0], INSERTED, t[1], head, tail + "\n" + t[4], t[3], t[5] + "\n" + t[6]]
    path = tmp_path / "secret-hitler-v2.txt"
    path.write_text("\f".join(new), encoding="utf-8")
    m = migrate(GOLD, {"sh-rules": path}, tmp_path / "sh-v2.yaml")
    wrong = [(x.question_id, x.old, x.new) for x in m.labels if x.carried
             and not {int(n.split("#")[1]) for n in x.new} <= TRUTH[int(x.old.split("#")[1])]]
    assert wrong == []
    kinds = {p.old_page: p.kind for p in m.documents[0].alignment.pages}
    assert kinds[5] == "moved" or kinds[4] == "moved"
    assert m.documents[0].alignment.inserted == (2,)
    carried = sum(x.carried for x in m.labels)
    assert carried >= 0.75 * len(m.labels), [(x.question_id, x.old, x.flag) for x in m.flagged]
