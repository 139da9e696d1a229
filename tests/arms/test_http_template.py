"""Request templates of the http arm: placeholders, types, braces, env, masking."""

from __future__ import annotations

from rulegauge.arms.http_template import check_template, env_names, render, secrets
from rulegauge.goldset.records import Question

Q = Question("q1", "How far {do} boats go?", "en", (), game="Lanterns", edition=None)
VALUES = {"question": Q.question, "question_id": "q1", "game": "Lanterns", "edition": None,
          "language": "en", "depth": 100}


def test_whole_placeholder_keeps_type_and_embedded_fills_text():
    out = render({"k": "{depth}", "e": "{edition}", "q": "Q: {question} ({language})", "n": 3,
                  "nested": [{"g": "{game}"}], "lit": "{{not}} a placeholder"}, VALUES)
    assert out == {"k": 100, "e": None, "q": "Q: How far {do} boats go? (en)", "n": 3,
                   "nested": [{"g": "Lanterns"}], "lit": "{not} a placeholder"}
    assert render("x{edition}y", VALUES) == "xy"


def test_env_rendered_or_masked(monkeypatch):
    monkeypatch.setenv("TOK", "abcd-secret")
    tpl = {"Authorization": "Bearer {env:TOK}"}
    assert render(tpl, VALUES) == {"Authorization": "Bearer abcd-secret"}
    assert render(tpl, VALUES, masked=True) == {"Authorization": "Bearer {env:TOK}"}
    assert env_names([tpl, "u{env:X}"]) == ["TOK", "X"]
    assert secrets([tpl]) == ["abcd-secret"]


def test_problems_name_the_allowed_placeholders(monkeypatch):
    monkeypatch.delenv("NOPE_VAR", raising=False)
    problems = check_template({"a": "{qestion}", "b": ["{env:NOPE_VAR}"], "c": "{env:}", "d": "x}"}, "body")
    assert problems[0].startswith("body.a: unknown placeholder {qestion}; allowed: {question}, "
                                  "{question_id}, {game}, {edition}, {language}, {depth}, {env:NAME}")
    assert "body.b[0]: environment variable NOPE_VAR is not set" in problems
    assert any(p.startswith("body.c: {env:} needs a variable name") for p in problems)
    assert any(p.startswith("body.d: unbalanced brace") for p in problems)
    assert check_template({"ok": "{question} {{x}}", "n": 1.5, "b": True}, "body") == []
