"""A versioned prompt file: one template with ``=== system ===`` and ``=== user ===``
sections, read once, hashed and rendered the same way by every prompt of rulegauge.

The answer prompt (:mod:`rulegauge.answering.prompt`), the fact judge
(:mod:`rulegauge.answering.judge`) and the relevance judge
(:mod:`rulegauge.judging.llm`) each name a file ``rulegauge/prompts/<version>.txt``.

Conventions
-----------
* The file must hold the two sections, ``system`` first; anything else raises
  :class:`~rulegauge.core.errors.RulegaugeError` naming the file.
* Placeholders are ``string.Template`` names (``$question``), substituted strictly:
  a placeholder without a value raises ``KeyError`` (a bug, never a silent gap);
  values are inserted as given, so a ``$`` inside a page cannot fail.
* :meth:`PromptFile.digest` is SHA-256 of ``version + "\\n" + template text``
  followed by any extra bytes a prompt declares (the answer prompt adds its
  language table), so any change to what a model reads changes the hash.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from string import Template

from rulegauge.core.errors import RulegaugeError

TEMPLATE_DIR = Path(__file__).resolve().parent.parent / "prompts"
"""Where prompt files live (package data beside the package)."""
_SECTION = re.compile(r"^=== (system|user) ===$", re.MULTILINE)


@cache
def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@cache
def _split(path: Path) -> tuple[Template, Template]:
    text = _read(path)
    marks = list(_SECTION.finditer(text))
    names = [m.group(1) for m in marks]
    if names != ["system", "user"]:
        raise RulegaugeError(f"prompt template {path.name}: expected sections "
                           f"['system', 'user'] in that order, found {names}")
    parts = [text[m.end():(marks[i + 1].start() if i + 1 < len(marks) else len(text))].strip("\n")
             for i, m in enumerate(marks)]
    return Template(parts[0]), Template(parts[1])


@dataclass(frozen=True)
class PromptFile:
    """The prompt ``rulegauge/prompts/<version>.txt``."""

    version: str

    @property
    def path(self) -> Path:
        return TEMPLATE_DIR / f"{self.version}.txt"

    def text(self) -> str:
        """The raw template (what :meth:`digest` hashes)."""
        return _read(self.path)

    def digest(self, extra: bytes = b"") -> str:
        """SHA-256 (hex) of the version, the template text and ``extra``."""
        return hashlib.sha256(f"{self.version}\n{self.text()}".encode() + extra).hexdigest()

    def describe(self, extra: bytes = b"") -> dict[str, str]:
        """Provenance for a manifest: version and digest."""
        return {"version": self.version, "sha256": self.digest(extra)}

    def render(self, values: dict[str, str]) -> list[dict[str, str]]:
        """``[{"role": "system", ...}, {"role": "user", ...}]`` with ``values`` substituted."""
        system, user = _split(self.path)
        return [{"role": "system", "content": system.substitute(values)},
                {"role": "user", "content": user.substitute(values)}]
