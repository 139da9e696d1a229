"""The one name check (rulegauge.core.names): path-forming names, NFC ids, invisible characters."""

from __future__ import annotations

import pytest

from rulegauge.core.errors import ConfigError
from rulegauge.core.names import check_name, id_problem, invisible_characters, name_problem, normalize_id


@pytest.mark.parametrize("bad", ["../x", "..", ".hidden", "a/b", "a\\b", "", "x" * 129, "r\u2215x",
                                 "a\x00b", "caf\u00e9"])
def test_path_forming_names_are_refused(bad: str) -> None:
    for kind in ("run id", "arm name", "answerer label", "config id"):
        with pytest.raises(ConfigError, match=f"bad {kind}"):
            check_name(kind, bad)


def test_plain_names_pass_and_config_ids_may_hold_plus() -> None:
    assert check_name("run id", "v1.2_final-3") == "v1.2_final-3"
    assert name_problem("config id", "rrf_k60_bm25+dense_w-dense0.5") is None
    assert name_problem("arm name", "bm25+dense") is not None


def test_ids_are_nfc_and_invisible_characters_are_named() -> None:
    assert normalize_id("cafe\u0301") == normalize_id("caf\u00e9") == "caf\u00e9"
    assert invisible_characters("q\u200b1\u202e") == ["U+200B ZERO WIDTH SPACE",
                                                     "U+202E RIGHT-TO-LEFT OVERRIDE"]
    assert "U+FEFF" in (id_problem("question id", "\ufeffq1") or "")
    assert id_problem("question id", "q-1 café") is None
