"""A chat answerer opened as a judge or a question generator: temperature 0, preflighted first.

:func:`open_judge` builds the answerer labelled ``label`` in an answerer suite (default:
the suite's ``[judge]``) with ``temperature`` forced to 0, and runs the answerers'
preflight (:func:`rulegauge.answering.preflight.preflight_all`): an endpoint that is down
raises a :class:`ValidationError` before any work. :func:`seeded_chat` is the
``(messages, key, seed) -> (reply, error)`` function the LLM judges call. :func:`open_chat`
does the same for any answerer spec (``rulegauge goldset generate``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rulegauge.answering.judge import chat_function
from rulegauge.answering.preflight import DEFAULT_TIMEOUT_S, preflight_all
from rulegauge.answering.specs import AnswererSpec, close, instantiate, suite_specs
from rulegauge.answering.suite import load_suite
from rulegauge.core.errors import RulegaugeError, ValidationError
from rulegauge.core.redact import Secrets


def suite_answerer(suite_path: Path, label: str) -> AnswererSpec:
    """The spec of the answerer labelled ``label`` in a suite (unknown labels listed)."""
    specs = {s.label: s for s in suite_specs(load_suite(suite_path))}
    if label not in specs:
        raise RulegaugeError(f"{suite_path}: no answerer labelled {label!r}; its answerers: "
                           f"{', '.join(specs) or '(none)'}")
    return specs[label]


def open_judge(suite_path: Path, label: str | None,
               timeout_s: float = DEFAULT_TIMEOUT_S) -> tuple[str, Any]:
    """(label, answerer) of the suite's judge, preflighted (module docstring)."""
    suite = load_suite(suite_path)
    chosen = label or suite.judge
    if chosen is None:
        labels = ", ".join(s.label for s in suite_specs(suite)) or "(none)"
        raise RulegaugeError(f"{suite_path}: no judge given (--judge LABEL) and the suite has no "
                           f"[judge]; its answerers: {labels}")
    return chosen, open_chat(suite_answerer(suite_path, chosen), timeout_s)


def open_chat(spec: AnswererSpec, timeout_s: float = DEFAULT_TIMEOUT_S,
              failed: str = "judge preflight failed; nothing was judged") -> Any:
    """The answerer of ``spec`` at temperature 0, able to take a free prompt, and
    preflighted: a ConfigError when it takes none, a ValidationError when its
    endpoint is down (nothing asked yet)."""
    answerer = instantiate(AnswererSpec(spec.label, spec.name,
                                        (*[(k, v) for k, v in spec.params if k != "temperature"],
                                         ("temperature", 0.0)), spec.concurrency))
    try:
        chat_function(answerer)  # a provider that takes no free prompt is refused here
        problems = preflight_all({spec.label: answerer}, timeout_s)
    except BaseException:
        close(answerer)
        raise
    if problems:
        close(answerer)
        raise ValidationError(problems, failed)
    return answerer


def seeded_chat(answerer: Any) -> Callable[[list[dict[str, str]], str, int],
                                           tuple[str, str | None]]:
    """``(messages, key, seed) -> (reply, error)`` over :func:`chat_function`."""
    by_seed: dict[int, Callable[[list[dict[str, str]], str], tuple[str, str | None]]] = {}

    def chat(msgs: list[dict[str, str]], key: str, seed: int) -> tuple[str, str | None]:
        if seed not in by_seed:
            by_seed[seed] = chat_function(answerer, seed)
        return by_seed[seed](msgs, key)

    return chat


def model_of(answerer: Any) -> str:
    """The model id the answerer describes (its registered name when it names none)."""
    return str(answerer.describe().get("model_id") or getattr(answerer, "name", "model"))


def secrets_of(answerer: Any) -> Secrets:
    """The secrets an answerer's calls carry (its ``secrets()``; none when it has no
    server), to clean whatever of its replies is kept or shown."""
    own = getattr(answerer, "secrets", None)
    found = own() if callable(own) else None
    return found if isinstance(found, Secrets) else Secrets()
