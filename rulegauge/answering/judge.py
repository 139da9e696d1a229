"""The optional fact judge: an answerer asked whether an answer states each fact.

For every answer that is not an error, of every question with reference facts
(:attr:`rulegauge.goldset.records.Question.facts`), the judge (any configured
chat answerer: ``ollama``, ``openai``, ``llama-cpp``) is asked once per fact with
the versioned judge prompt ``rulegauge/prompts/judge-v1.txt`` (question, answer,
the fact's phrasings joined by " / "). The verdict is the reply's first word
after Markdown emphasis: ``YES`` -> stated, ``NO`` -> not stated (any case);
anything else, or a failed call, is no verdict (``stated`` null, ``error`` says
why). Verdicts go to the ``judge_verdicts`` table with the judge's label, model
and :func:`judge_prompt_hash`.

``judge_fact_recall`` (:mod:`rulegauge.answering.answer_metrics`) = facts the judge
said are stated / facts; NaN when the answer was not judged or a verdict is missing.
Calls are made one at a time, in answers-table order, so the table is the same
whatever the thread scheduling.

Reference: LLM-as-a-judge with a fixed rubric, Zheng et al., "Judging
LLM-as-a-Judge with MT-Bench and Chatbot Arena" (NeurIPS 2023).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from typing import Any

import pandas as pd

from rulegauge.answering.breaker import DEFAULT_AFTER, Breaker, guarded_chat
from rulegauge.answering.prompt_file import PromptFile
from rulegauge.core.errors import ConfigError
from rulegauge.core.redact import Secrets
from rulegauge.core.tablerows import rows as table_rows
from rulegauge.goldset.records import Question

JUDGE_PROMPT_VERSION = "judge-v1"
METRIC = "judge_fact_recall"
_FIRST_WORD = re.compile(r"^[\s*_`>#\"']*([A-Za-z]+)")
COLUMNS = ["question_id", "config_id", "answerer", "fact", "judge", "judge_model",
           "judge_prompt_hash", "stated", "reply", "error"]


JUDGE_PROMPT = PromptFile(JUDGE_PROMPT_VERSION)


def template_text() -> str:
    return JUDGE_PROMPT.text()


def judge_prompt_hash() -> str:
    """SHA-256 of the judge prompt version and template."""
    return JUDGE_PROMPT.digest()


def describe() -> dict[str, str]:
    return JUDGE_PROMPT.describe()


def messages(question: str, answer: str, fact: tuple[str, ...]) -> list[dict[str, str]]:
    """The judge prompt rendered for one answer and one fact."""
    return JUDGE_PROMPT.render({"question": question, "answer": answer, "fact": " / ".join(fact)})


def verdict(reply: str) -> bool | None:
    """YES -> True, NO -> False, anything else None (module docstring)."""
    m = _FIRST_WORD.match(reply or "")
    word = m.group(1).upper() if m else ""
    return True if word == "YES" else False if word == "NO" else None


def _seeded(body: dict[str, Any], seed: int | None) -> dict[str, Any]:
    """``body`` with its sampling seed replaced (Ollama keeps it under ``options``)."""
    if seed is None:
        return body
    if isinstance(body.get("options"), dict):
        return {**body, "options": {**body["options"], "seed": seed}}
    return {**body, "seed": seed}


def chat_function(judge: Any, seed: int | None = None
                  ) -> Callable[[list[dict[str, str]], str], tuple[str, str | None]]:
    """``(messages, key) -> (reply, error)`` for a chat answerer; ConfigError otherwise.
    ``seed`` replaces the answerer's own sampling seed (None: keep it)."""
    if all(hasattr(judge, a) for a in ("poster", "payload", "parse")):
        def http(msgs: list[dict[str, str]], key: str) -> tuple[str, str | None]:
            res = judge.poster.post(_seeded(judge.payload(msgs), seed), key)
            if res.error is not None:
                return "", res.error
            try:
                return judge.parse(res.body).text, None
            except Exception as exc:  # a malformed reply is a missing verdict, not a crash
                return "", f"malformed reply: {exc}"
        return http
    if hasattr(judge, "_model"):  # llama-cpp: a local model object
        def local(msgs: list[dict[str, str]], key: str) -> tuple[str, str | None]:
            try:
                with judge._lock:
                    out = judge._model().create_chat_completion(
                        messages=msgs, max_tokens=8, temperature=0.0,
                        seed=judge.seed if seed is None else seed)
                return out["choices"][0]["message"]["content"] or "", None
            except Exception as exc:
                return "", f"{type(exc).__name__}: {exc}"
        return local
    raise ConfigError(f"answerer {getattr(judge, 'name', type(judge).__name__)!r} cannot judge: "
                      "it does not take a free prompt; use ollama, openai or llama-cpp")


def judge_answers(judge: Any, label: str, answers: pd.DataFrame,
                  questions: Mapping[str, Question], progress: Any = None,
                  breaker_after: int = DEFAULT_AFTER) -> pd.DataFrame:
    """The ``judge_verdicts`` frame for every non-error answer of a question with facts;
    ``answers`` has columns question_id, config_id, answerer, outcome, text. After
    ``breaker_after`` consecutive connection failures the judge is not asked again
    (:mod:`rulegauge.answering.breaker`): the rest are missing verdicts saying why."""
    chat = guarded_chat(chat_function(judge), Breaker(f"judge {label}", breaker_after))
    own = getattr(judge, "secrets", None)  # what its calls carry: never kept in a verdict row
    secrets = own() if callable(own) else Secrets()
    model = str(judge.describe().get("model_id", ""))
    phash = judge_prompt_hash()
    todo = [r for r in table_rows(answers)
            if r.outcome != "error" and questions[r.question_id].facts]
    total = sum(len(questions[r.question_id].facts) for r in todo)
    rows = []
    ctx = progress(f"judging with {label}", total) if progress and total else nullcontext()
    with ctx as bar:
        for r in todo:
            q = questions[r.question_id]
            for i, fact in enumerate(q.facts, start=1):
                reply, error = chat(messages(q.question, r.text, fact),
                                    f"judge|{r.question_id}|{r.config_id}|{r.answerer}|{i}")
                reply = secrets.scrub(reply)
                stated = verdict(reply) if error is None else None
                if error is None and stated is None:
                    error = f"reply is not YES or NO: {secrets.excerpt(reply, 80)!r}"
                rows.append({"question_id": r.question_id, "config_id": r.config_id,
                             "answerer": r.answerer, "fact": i, "judge": label,
                             "judge_model": model, "judge_prompt_hash": phash, "stated": stated,
                             "reply": reply, "error": error})
                if bar is not None:
                    bar(1)
    df = pd.DataFrame(rows, columns=COLUMNS)
    return df.astype({"stated": "boolean"})


def verdicts_by_answer(verdicts: pd.DataFrame
                       ) -> dict[tuple[str, str, str], tuple[bool | None, ...]]:
    """(question, config, answerer) -> the verdict per fact, in fact order (None: none)."""
    out: dict[tuple[str, str, str], tuple[bool | None, ...]] = {}
    for key, g in verdicts.groupby(["question_id", "config_id", "answerer"], sort=False):
        out[(str(key[0]), str(key[1]), str(key[2]))] = tuple(
            None if pd.isna(x) else bool(x) for x in g.sort_values("fact")["stated"])
    return out
