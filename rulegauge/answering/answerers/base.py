"""The answerer interface and registry.

An answerer receives the question and the numbered passages of the answering
read (:class:`~rulegauge.answering.requests.AnswerRequest`) and returns text with
``[n]`` citation markers, or an abstention. Every answerer renders the same
versioned prompt (``rulegauge.answering.prompt``), so that models are compared on
identical input.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

from rulegauge.answering.requests import AnswerRequest, AnswerResponse
from rulegauge.core import plugins
from rulegauge.core.registry import Registry, kind_check


@runtime_checkable
class Answerer(Protocol):
    name: ClassVar[str]

    def answer(self, request: AnswerRequest) -> AnswerResponse: ...

    def describe(self) -> dict[str, Any]:
        """Model id, endpoint (without secrets), parameters: for the manifest."""
        ...


ANSWERERS: Registry[type] = Registry("answerer", group="rulegauge.answerers", door=plugins.DOOR,
                                     accepts=kind_check("an answerer class", methods=("answer", "describe"),
                                                        classes=True, ref="docs/plugins.md"))
"""Optional answerer methods the runner uses when present: ``covers(request) -> bool``
(False: the answerer has nothing for this question and is not asked; no row is
written), ``preflight(timeout_s) -> str | None`` (:mod:`rulegauge.answering.preflight`),
``close()``, and the class attribute ``max_concurrency``."""
