"""The docs tier's extractor: every command line of the documentation, with the markers that
say how the tier treats it (CONTRIBUTING.md, "Docs that run").

A command is a line of a code block (indented by four spaces, or fenced) that starts, after an
optional ``$ `` prompt and ``NAME=value`` prefixes, with ``rulegauge``, ``.venv/bin/rulegauge``,
``python``, ``bash``, ``pip``, ``jupyter``, ``mlflow`` or ``jq``; a trailing ``# comment`` is
dropped, a line ending in ``\\`` continues on the next. Markers are HTML comments (invisible
when rendered) on the lines just above a block, one directive each::

    <!-- docs-tier: skip (needs Ollama on 127.0.0.1:11434) -->       every command of the block
    <!-- docs-tier: skip "rulegauge report latest --serve" (blocks: tests/analysis/test_serve_report.py) -->
    <!-- docs-tier: synopsis -->        a syntax line ([-o OUT], DIR...): neither parsed nor run
    <!-- docs-tier: exit 1 "rulegauge trend" -->          the exit code a command must give
    <!-- docs-tier: expect "20 ok" -->                    text the block's output must hold
    <!-- docs-tier: file report.html -->                  a file the block must leave
    <!-- docs-tier: given my-grid.toml from docs/grids/methods.toml -->   placed before the block
    <!-- docs-tier: before "rulegauge run" -->    what the page assumes was done: run first

A quoted command prefix narrows ``skip``, ``exit`` and ``expect`` to the commands it begins;
a marker that names no command of its block, or an unknown directive, is an error.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from tests.helpers.common import REPO

PAGES: tuple[str, ...] = ("README.md", *sorted(f"docs/{p.name}" for p in (REPO / "docs").glob("*.md")),
                          "notebooks/README.md", "goldsets/README.md")
STARTS = re.compile(r"^(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:\.venv/bin/)?"
                    r"(rulegauge|python3?|bash|pip|jupyter|mlflow|jq)(?:\s|$)")
MARKER = re.compile(r"^\s*<!--\s*docs-tier:\s*(.*?)\s*-->\s*$")
QUOTED = r'"((?:[^"\\]|\\.)*)"'
DIRECTIVES = {
    "skip": re.compile(rf"^skip(?:\s+{QUOTED})?\s+\((.+)\)$"),
    "synopsis": re.compile(r"^synopsis$"),
    "exit": re.compile(rf"^exit\s+(\d+)(?:\s+{QUOTED})?$"),
    "expect": re.compile(rf"^expect\s+{QUOTED}(?:\s+{QUOTED})?$"),
    "file": re.compile(r"^file\s+(\S+)$"),
    "given": re.compile(r"^given\s+(\S+)\s+from\s+(\S+)$"),
    "before": re.compile(rf"^before\s+{QUOTED}$"),
}


USED: set[int] = set()  # marker lines a block took, while one page is read


class MarkerError(ValueError):
    """A marker the tier cannot read (unknown directive, or naming no command of its block)."""


@dataclass(frozen=True)
class Command:
    """One documented command: where it stands and how the tier treats it."""

    page: str
    line: int
    text: str
    skip: str = ""  # the reason, when the tier does not run it
    synopsis: bool = False
    exit: int = 0

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def words(self) -> list[str]:
        return shlex.split(self.text)

    @property
    def is_rulegauge(self) -> bool:
        m = STARTS.match(self.text)
        return bool(m and m.group(1) == "rulegauge")

    def rulegauge_argvs(self) -> list[list[str]]:
        """The arguments of each ``rulegauge`` invocation on the line (``a && b`` gives two;
        env prefixes dropped); none inside ``$(...)`` or past a pipe."""
        out = []
        for part in re.split(r"\s&&\s", self.text.split(" | ")[0]):
            words = shlex.split(part.rstrip(" &"))
            while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
                words.pop(0)
            if words and words[0].endswith("rulegauge"):
                out.append(words[1:])
        return out


@dataclass
class Block:
    """A code block's commands and its markers' checks."""

    page: str
    line: int
    commands: list[Command] = field(default_factory=list)
    expect: list[tuple[str, str]] = field(default_factory=list)  # (text, command prefix or "")
    files: list[str] = field(default_factory=list)
    given: list[tuple[str, str]] = field(default_factory=list)
    before: list[str] = field(default_factory=list)


def _command_lines(lines: list[str], start: int, end: int) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for i in range(start, end):
        s = lines[i].strip()
        if pending is not None:
            text = pending[1] + " " + s
            if text.endswith("\\"):
                pending = (pending[0], text[:-1].rstrip())
            elif _open_quote(text):
                pending = (pending[0], text)
            else:
                out.append((pending[0], _drop_comment(text)))
                pending = None
            continue
        if s.startswith("$ "):
            s = s[2:]
        if not STARTS.match(s) or "\u2502" in s:  # a box drawing's row is no command
            continue
        if s.endswith("\\"):
            pending = (i + 1, _drop_comment(s[:-1].rstrip()))
        elif _open_quote(s):  # a quoted argument (SQL) running over several lines
            pending = (i + 1, s)
        else:
            s = _drop_comment(s)
            out.append((i + 1, s))
    if pending is not None:
        out.append(pending)
    return out


def _open_quote(s: str) -> bool:
    try:
        shlex.split(s)
    except ValueError:
        return True
    return False


def _drop_comment(s: str) -> str:
    """The line without a trailing ``# comment`` (a ``#`` inside quotes is kept)."""
    quote = ""
    for i, ch in enumerate(s):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and i > 0 and s[i - 1] == " ":
            return s[:i].rstrip()
    return s


def _blocks(lines: list[str]) -> list[tuple[int, int, list[str]]]:
    """(first line index, end index, marker directives) of every code block."""
    out = []
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        fenced = line.strip().startswith("```")
        indented = line.startswith("    ") and line.strip() and (i == 0 or not lines[i - 1].strip())
        if not (fenced or indented):
            i += 1
            continue
        markers, j = [], i - 1
        if j >= 0 and not lines[j].strip():  # markers stand above the blank line before a block
            j -= 1
        while j >= 0 and MARKER.match(lines[j]):
            markers.insert(0, MARKER.match(lines[j]).group(1))  # type: ignore[union-attr]
            USED.add(j)
            j -= 1
        if fenced:
            end = i + 1
            while end < n and not lines[end].strip().startswith("```"):
                end += 1
            out.append((i + 1, end, markers))
            i = end + 1
        else:
            end = i
            while end < n and (lines[end].startswith("    ") or not lines[end].strip()):
                end += 1
            out.append((i, end, markers))
            i = end
    return out


def _applies(prefix: str, cmd: Command) -> bool:
    return not prefix or cmd.text.startswith(prefix)


def page_blocks(page: str, text: str | None = None) -> list[Block]:
    """Every code block of ``page`` (a path relative to the repository) that holds a command,
    with its markers applied; raises :class:`MarkerError` naming ``page:line``."""
    lines = (text if text is not None else (REPO / page).read_text(encoding="utf-8")).split("\n")
    USED.clear()
    blocks = []
    for start, end, markers in _blocks(lines):
        found = _command_lines(lines, start, end)
        if not found and not markers:
            continue
        block = Block(page, start + 1, [Command(page, ln, t) for ln, t in found])
        for raw in markers:
            _apply(block, raw)
        if block.commands:
            blocks.append(block)
    stray = [i + 1 for i, line in enumerate(lines) if MARKER.match(line) and i not in USED]
    if stray:
        raise MarkerError(f"{page}:{stray[0]}: a docs-tier marker not directly above a code block "
                          "(markers stand on the lines above the blank line before the block)")
    return blocks


def _apply(block: Block, raw: str) -> None:
    where = f"{block.page}:{block.line}"
    name = raw.split(" ", 1)[0]
    pattern = DIRECTIVES.get(name)
    m = pattern.match(raw) if pattern else None
    if m is None:
        raise MarkerError(f"{where}: unknown docs-tier marker {raw!r} (known: {', '.join(DIRECTIVES)})")
    if not block.commands:
        raise MarkerError(f"{where}: marker {raw!r} above a block without a command")
    cmds = block.commands
    if name in ("skip", "exit"):
        prefix = (m.group(1) if name == "skip" else m.group(2)) or ""
        hit = [i for i, c in enumerate(cmds) if _applies(prefix, c)]
        if not hit:
            raise MarkerError(f"{where}: marker {raw!r} names no command of its block")
        for i in hit:
            c = cmds[i]
            cmds[i] = Command(c.page, c.line, c.text, skip=m.group(2) if name == "skip" else c.skip,
                              synopsis=c.synopsis, exit=int(m.group(1)) if name == "exit" else c.exit)
    elif name == "synopsis":
        block.commands = [Command(c.page, c.line, c.text, skip="a synopsis, not a command",
                                  synopsis=True) for c in cmds]
    elif name == "expect":
        prefix = m.group(2) or ""
        if not any(_applies(prefix, c) for c in cmds):
            raise MarkerError(f"{where}: marker {raw!r} names no command of its block")
        block.expect.append((m.group(1), prefix))
    elif name == "file":
        block.files.append(m.group(1))
    elif name == "given":
        block.given.append((m.group(1), m.group(2)))
    else:
        block.before.append(m.group(1))


def all_blocks() -> dict[str, list[Block]]:
    """Every page's blocks (:data:`PAGES`), in page order."""
    return {page: page_blocks(page) for page in PAGES}


def all_commands() -> list[Command]:
    return [c for blocks in all_blocks().values() for b in blocks for c in b.commands]


def recipe_commands() -> list[Command]:
    """The ``rulegauge`` lines of the CI recipes (``docs/ci/*.sh``, the workflows' ``run:``
    steps), for the parse check; ``$VAR`` words stand for values and are parsed as such."""
    out = []
    for path in sorted((REPO / "docs" / "ci").iterdir()):
        if path.suffix not in (".sh", ".yml"):
            continue
        for i, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
            s = line.strip().removeprefix("- ").removeprefix("run: ")
            if re.match(r'^(?:"\$RULEGAUGE"|\$RULEGAUGE|rulegauge)\s', s) and "${" not in s:
                text = re.sub(r'^"?\$RULEGAUGE"?', "rulegauge", s).rstrip("\\").strip()
                out.append(Command(f"docs/ci/{path.name}", i, text))
    return out
