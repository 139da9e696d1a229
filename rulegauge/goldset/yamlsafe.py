"""Reading untrusted YAML safely: UTF-8 only, aliases bounded, no cycles.

:func:`compose` turns bytes into a YAML node graph and checks it before anything
is constructed:

* the bytes must be UTF-8 (a BOM is allowed); anything else is refused naming the
  line and byte, instead of PyYAML guessing or failing deep inside;
* aliases share nodes, so a "billion laughs" file is small as a graph but huge
  once expanded: the nodes aliases *add* when expanded (expanded size, every alias
  copy counted and computed once per node, minus the distinct nodes of the file)
  must stay under :data:`MAX_ALIAS_EXPANSION`; a large file without aliases (a
  100,000-question gold set) adds none, whatever its size;
* a NUL or other character YAML refuses is reported by line, not by offset;
* the text is read in Unicode NFC (:func:`rulegauge.core.names.normalize_id`), so ids
  that differ only in normalisation (``café`` typed two ways) are one id;
* an alias inside the node it refers to (``&a [*a]``) is a cycle: refused;
* nesting deeper than Python's recursion allows is refused, not a traceback.

:func:`duplicate_keys` visits each distinct node once (an alias is not walked
again), so it is linear in the file, not in the expansion.

Problems are :class:`rulegauge.core.errors.Problem` with ``file:line``. Reference:
YAML 1.1 section 3.2.2.2 (anchors and aliases); PyYAML ``Composer``.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from rulegauge.core.errors import Problem
from rulegauge.core.names import normalize_id

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's parser when PyYAML was built with it (about 10x faster: 10,000 questions
compose in under a second instead of ~8 s); the same node graph, marks included.
libyaml refuses nesting deeper than 1,000 levels itself."""

MAX_ALIAS_EXPANSION = 1_000_000
"""Nodes aliases may add to a document once expanded (real gold sets use aliases
for a handful of shared page lists, if at all)."""
MAX_EXPANDED_NODES = MAX_ALIAS_EXPANSION  # the older name
_CAP = 1 << 62  # sizes saturate here: a bomb's expanded size need not be exact


def _where(path: Path, node: yaml.Node) -> str:
    return f"{path}:{node.start_mark.line + 1}"


def decode(path: Path, data: bytes) -> tuple[str | None, list[Problem]]:
    """``data`` as text, or a problem naming the line of the first bad byte."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, [Problem(f"{path}:{line}", f"not valid UTF-8 (byte {exc.start}, "
                              f"0x{data[exc.start]:02x}); save the file as UTF-8")]
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data[:nul].count(b"\n") + 1
        return None, [Problem(f"{path}:{line}", f"a NUL byte (byte {nul}); a gold set is text: "
                              "remove it")]
    return normalize_id(text), []


def expanded_size(root: yaml.Node, path: Path) -> tuple[int, list[Problem]]:
    """Nodes aliases add to ``root`` once expanded (expanded size minus distinct
    nodes), or a problem for a cycle.

    Iterative post-order walk with memo by node identity: each distinct node is
    sized once, so the walk is linear in the composed graph.
    """
    size: dict[int, int] = {}
    state: dict[int, int] = {}  # 1 = on the current path, 2 = done
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            total = 1
            for child in _children(node):
                total += size[id(child)]
            size[key] = min(total, _CAP)
            state[key] = 2
            continue
        if state.get(key) == 2:
            continue
        if state.get(key) == 1:
            return 0, [Problem(_where(path, node), "recursive alias: a node contains itself "
                               "(an alias inside the anchor it names)")]
        state[key] = 1
        stack.append((node, True))
        for child in _children(node):
            if state.get(id(child)) == 1:
                return 0, [Problem(_where(path, child), "recursive alias: a node contains "
                                   "itself (an alias inside the anchor it names)")]
            if state.get(id(child)) != 2:
                stack.append((child, False))
    return size[id(root)] - len(size), []  # nodes the aliases add


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [x for pair in node.value for x in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def compose(path: Path, data: bytes) -> tuple[yaml.Node | None, list[Problem]]:
    """The checked node graph of ``data`` (None with problems when it is unusable;
    None without problems for an empty document)."""
    text, problems = decode(path, data)
    if text is None:
        return None, problems
    loader = _LOADER(text)
    try:
        root = loader.get_single_node()
    except yaml.reader.ReaderError as exc:  # a character YAML refuses: say the line
        line = text[: exc.position].count("\n") + 1
        return None, [Problem(f"{path}:{line}", f"not valid YAML: character {exc.character!r} "
                              "is not allowed in YAML text")]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        return None, [Problem(where, f"not valid YAML: {getattr(exc, 'problem', None) or exc}")]
    except RecursionError:
        return None, [Problem(str(path), "not valid YAML: nested too deeply")]
    finally:
        loader.dispose()
    if root is None:
        return None, []
    n, problems = expanded_size(root, path)
    if problems:
        return None, problems
    if n > MAX_ALIAS_EXPANSION:
        return None, [Problem(str(path), f"aliases expand to more than {MAX_ALIAS_EXPANSION:,} "
                              "nodes beyond the file's own (a YAML bomb?); write the content "
                              "out instead")]
    return root, []


def construct(path: Path, root: yaml.Node) -> tuple[object, list[Problem]]:
    """Python objects of a checked node graph (a problem for tags PyYAML's safe
    constructor refuses, or scalars it cannot build, such as the date 2024-13-45)."""
    loader = yaml.SafeLoader("")
    try:
        return loader.construct_document(root), []
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        return None, [Problem(where, f"not valid YAML: {getattr(exc, 'problem', None) or exc}")]
    except (ValueError, TypeError, OverflowError) as exc:
        return None, [Problem(str(path), f"not valid YAML: a value cannot be read ({exc})")]
    except RecursionError:
        return None, [Problem(str(path), "not valid YAML: nested too deeply")]
    finally:
        loader.dispose()


def duplicate_keys(root: yaml.Node, path: Path) -> list[Problem]:
    """A problem for every key repeated within one mapping (each node visited once)."""
    problems: list[Problem] = []
    seen_nodes: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys: set[str] = set()
            for key, _ in node.value:
                if isinstance(key, yaml.ScalarNode):
                    if key.value in keys:
                        problems.append(Problem(_where(path, key),
                                                f"duplicate key {key.value!r}"))
                    keys.add(key.value)
        stack.extend(reversed(_children(node)))
    return problems
