"""Answerer suites: a TOML file declaring the answerers of a comparison.

Format (``docs/answerers.md`` has a full example)::

    [suite]
    name = "local-models"        # optional, shown in the manifest
    max_error_rate = 0.05         # optional: above it `rulegauge answer` exits 1
    workers = 2                   # optional: default calls in flight per answerer

    [answerers.small]             # the table name is the answerer's label
    provider = "ollama"           # a registered answerer (rulegauge list answerers)
    model = "qwen2.5:0.5b"        # -> the answerer's ``model``
    endpoint = "http://127.0.0.1:11434"   # -> ``base_url``
    timeout_s = 120               # -> ``timeout_s``
    retries = 2                   # -> ``retries``
    concurrency = 1               # calls in flight for this answerer
    prompt = "answer-v1"          # must be the prompt version rulegauge renders
    [answerers.small.parameters]  # any other constructor parameter of the provider
    temperature = 0.0

    [judge]                       # optional: who judges the reference facts
    answerer = "small"            # a label of this suite

Conventions: every problem of the file is reported at once (``file: key:
message``), unknown keys name the allowed ones, and each answerer is constructed
once during validation so that its own parameter checks (unknown parameter,
missing model, bad URL) are reported here too, before anything is asked. A key
given both as a field and in ``parameters`` is a problem. The suite's SHA-256 (of
the file's bytes) goes into the run manifest.

Reference: the provider list of promptfoo (https://www.promptfoo.dev/docs/providers/),
which declares model endpoints with their options in one config file.
"""

from __future__ import annotations

import hashlib
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rulegauge.core.errors import ConfigError, Problem, RulegaugeError, ValidationError
from rulegauge.core.limits import COUNTS, count_problem

SUITE_KEYS = ("name", "max_error_rate", "workers")
ANSWERER_KEYS = ("provider", "model", "endpoint", "timeout_s", "retries", "concurrency",
                 "prompt", "parameters")
JUDGE_KEYS = ("answerer",)
# suite field -> constructor parameter of the provider
FIELD_PARAMS = {"model": "model", "endpoint": "base_url", "timeout_s": "timeout_s",
                "retries": "retries"}
DEFAULT_MAX_ERROR_RATE = 0.05


@dataclass(frozen=True)
class SuiteAnswerer:
    label: str
    provider: str
    params: tuple[tuple[str, Any], ...]
    concurrency: int | None = None


@dataclass(frozen=True)
class Suite:
    path: str
    sha256: str
    name: str
    answerers: tuple[SuiteAnswerer, ...]
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE
    workers: int | None = None
    judge: str | None = None

    def describe(self) -> dict[str, Any]:
        """For the manifest: where the suite came from and what it declared."""
        return {"path": self.path, "sha256": self.sha256, "name": self.name,
                "max_error_rate": self.max_error_rate, "workers": self.workers,
                "judge": self.judge, "answerers": [a.label for a in self.answerers]}


class _Problems:
    def __init__(self, where: str) -> None:
        self.where = where
        self.items: list[Problem] = []

    def add(self, key: str, message: str) -> None:
        self.items.append(Problem(f"{self.where}: {key}" if key else self.where, message))

    def unknown(self, table: dict[str, Any], prefix: str, allowed: tuple[str, ...]) -> None:
        for k in table:
            if k not in allowed:
                self.add(f"{prefix}{k}", f"unknown key; allowed: {', '.join(allowed)}")


def _positive_int(v: Any) -> bool:
    """An integer >= 1 and within the bound of concurrency counts (core.limits)."""
    return count_problem("concurrency", v) is None


def load_suite(path: str | Path) -> Suite:
    """Read and validate a suite file; raise one :class:`ValidationError` with every problem."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ValidationError([Problem(str(p), f"cannot read suite file ({exc.strerror or exc})")],
                              "unreadable answerer suite") from None
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValidationError([Problem(str(p), f"not valid TOML ({exc})")],
                              "malformed answerer suite") from None
    return parse_suite(raw, str(p), hashlib.sha256(data).hexdigest())


def parse_suite(raw: dict[str, Any], where: str = "<suite>", sha256: str = "") -> Suite:
    """Validate a parsed suite mapping (see the module docstring)."""
    from rulegauge.answering.answerers import ANSWERERS, load_builtin_answerers, make_answerer
    from rulegauge.answering.journal import valid_label
    from rulegauge.answering.prompt import PROMPT_VERSION

    load_builtin_answerers()
    pr = _Problems(where)
    pr.unknown(raw, "", ("suite", "answerers", "judge"))
    head = raw.get("suite", {})
    if not isinstance(head, dict):
        pr.add("suite", "must be a table ([suite])")
        head = {}
    pr.unknown(head, "suite.", SUITE_KEYS)
    name = head.get("name", Path(where).stem)
    if not isinstance(name, str) or not name.strip():
        pr.add("suite.name", f"must be a non-empty string, got {name!r}")
        name = Path(where).stem
    rate = head.get("max_error_rate", DEFAULT_MAX_ERROR_RATE)
    if (isinstance(rate, bool) or not isinstance(rate, int | float) or not math.isfinite(rate)
            or not 0 <= rate <= 1):
        pr.add("suite.max_error_rate", f"must be a number within [0, 1], got {rate!r}")
        rate = DEFAULT_MAX_ERROR_RATE
    workers = head.get("workers")
    if workers is not None and not _positive_int(workers):
        pr.add("suite.workers", f"must be an integer between 1 and {COUNTS['concurrency']}, "
               f"got {workers!r}")
        workers = None
    table = raw.get("answerers")
    out: list[SuiteAnswerer] = []
    if not isinstance(table, dict) or not table:
        pr.add("answerers", "declare at least one answerer, e.g. [answerers.small] "
               "provider = \"ollama\"")
        table = {}
    for label, entry in table.items():
        key = f"answerers.{label}"
        if not valid_label(label):
            pr.add(key, "a label uses letters, digits, '_', '.', '-'")
        if not isinstance(entry, dict):
            pr.add(key, "must be a table with at least provider = \"...\"")
            continue
        pr.unknown(entry, key + ".", ANSWERER_KEYS)
        provider = entry.get("provider")
        if not isinstance(provider, str) or provider not in ANSWERERS:
            pr.add(key + ".provider", f"{'missing' if provider is None else repr(provider)}; "
                   f"choose one of: {', '.join(ANSWERERS.names())}")
            provider = None
        prompt = entry.get("prompt", PROMPT_VERSION)
        if prompt != PROMPT_VERSION:
            pr.add(key + ".prompt", f"unknown prompt version {prompt!r}; rulegauge renders "
                   f"{PROMPT_VERSION}")
        concurrency = entry.get("concurrency")
        if concurrency is not None and not _positive_int(concurrency):
            pr.add(key + ".concurrency", f"must be an integer between 1 and "
                   f"{COUNTS['concurrency']}, got {concurrency!r}")
            concurrency = None
        params = entry.get("parameters", {})
        if not isinstance(params, dict):
            pr.add(key + ".parameters", "must be a table of constructor parameters")
            params = {}
        merged = dict(params)
        for field, param in FIELD_PARAMS.items():
            if field in entry:
                if param in params:
                    pr.add(f"{key}.parameters.{param}", f"given twice (also as {field})")
                merged[param] = entry[field]
        if provider is not None:
            try:
                instance = make_answerer(provider, **merged)
            except (ConfigError, RulegaugeError, TypeError, ValueError) as exc:
                pr.add(key, str(exc))
            else:
                close = getattr(instance, "close", None)
                if callable(close):
                    close()
        out.append(SuiteAnswerer(label, provider or "", tuple(sorted(merged.items())),
                                 concurrency))
    judge_t = raw.get("judge")
    judge = None
    if judge_t is not None:
        if not isinstance(judge_t, dict):
            pr.add("judge", "must be a table ([judge]) with answerer = \"LABEL\"")
        else:
            pr.unknown(judge_t, "judge.", JUDGE_KEYS)
            judge = judge_t.get("answerer")
            if judge not in table:
                pr.add("judge.answerer", f"{judge!r} is not an answerer of this suite; choose "
                       f"one of: {', '.join(table) or '(none)'}")
                judge = None
    if pr.items:
        raise ValidationError(pr.items, f"{where}: invalid answerer suite")
    return Suite(where, sha256, str(name), tuple(out), float(rate), workers, judge)
