"""rulegauge.answering.prompt_file: one reader, hash and renderer for every prompt file."""

from __future__ import annotations

import hashlib

import pytest

from rulegauge.answering import judge, prompt
from rulegauge.answering.prompt_file import TEMPLATE_DIR, PromptFile
from rulegauge.core.errors import RulegaugeError
from rulegauge.judging import llm


@pytest.mark.parametrize("version", ["answer-v1", "judge-v1", "relevance-v1"])
def test_digest_is_sha256_of_version_newline_text_and_extra(version: str) -> None:
    p = PromptFile(version)
    text = (TEMPLATE_DIR / f"{version}.txt").read_text(encoding="utf-8")
    assert p.digest() == hashlib.sha256(f"{version}\n{text}".encode()).hexdigest()
    assert p.digest(b"x") == hashlib.sha256(f"{version}\n{text}x".encode()).hexdigest()
    assert p.describe() == {"version": version, "sha256": p.digest()}


def test_the_three_prompts_hash_and_render_through_it() -> None:
    assert judge.judge_prompt_hash() == PromptFile("judge-v1").digest()
    assert llm.prompt_hash() == PromptFile("relevance-v1").digest()
    assert prompt.prompt_hash() != PromptFile("answer-v1").digest()  # the language table is hashed too
    msgs = llm.messages("Who starts?", "The youngest player starts. $5 coins")
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert "The youngest player starts. $5 coins" in msgs[1]["content"]  # a $ in a value stays as given


def test_a_missing_value_raises() -> None:
    with pytest.raises(KeyError):
        PromptFile("relevance-v1").render({"question": "q"})


def test_a_file_without_both_sections_raises(tmp_path, monkeypatch) -> None:
    import rulegauge.answering.prompt_file as pf
    (tmp_path / "bad-v1.txt").write_text("=== user ===\nhi $question\n", encoding="utf-8")
    monkeypatch.setattr(pf, "TEMPLATE_DIR", tmp_path)
    with pytest.raises(RulegaugeError, match=r"bad-v1.txt: expected sections \['system', 'user'\]"):
        PromptFile("bad-v1").render({"question": "q"})
