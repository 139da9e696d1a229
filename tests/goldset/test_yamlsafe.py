"""yamlsafe.compose on libyaml gives the node graph (values, tags, lines) PyYAML's
pure-Python parser gives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from rulegauge.goldset import yamlsafe

REPO = Path(__file__).resolve().parents[2]


def shape(node: yaml.Node) -> object:
    if isinstance(node, yaml.ScalarNode):
        # style: libyaml says "" for a plain scalar where PyYAML says None (no reader uses it)
        return (node.tag, node.value, node.style or None, node.start_mark.line, node.start_mark.column)
    kids = ([(shape(k), shape(v)) for k, v in node.value] if isinstance(node, yaml.MappingNode)
            else [shape(v) for v in node.value])
    return (type(node).__name__, node.tag, node.flow_style, node.start_mark.line, kids)


def generated() -> str:
    rng = np.random.default_rng(3)
    lines = ["goldset: gen", "version: 1", "documents:", "  - id: d1", "    path: d1.jsonl",
             "questions:"]
    for i in range(300):
        words = " ".join(f"w{int(x)}" for x in rng.integers(0, 50, 6))
        if i % 3 == 0:
            lines.append(f"  - {{id: q{i}, question: \"{words}?\", pages: [d1#{i % 7 + 1}]}}")
        else:
            lines += [f"  - id: q{i}", f"    question: '{words}: yes'", "    pages:",
                      f"      - d1#{i % 5 + 1}", "    tags: [a, 'b c']  # comment"]
    return "\n".join(lines) + "\n"


@pytest.mark.skipif(yamlsafe._LOADER is yaml.SafeLoader, reason="PyYAML built without libyaml")
def test_libyaml_composes_the_same_graph(tmp_path: Path) -> None:
    texts = [p.read_text(encoding="utf-8") for p in sorted((REPO / "goldsets").rglob("*.yaml"))]
    texts.append(generated())
    assert len(texts) > 1
    for text in texts:
        path = tmp_path / "g.yaml"
        path.write_text(text, encoding="utf-8")
        root, problems = yamlsafe.compose(path, text.encode("utf-8"))
        assert not problems and root is not None
        assert shape(root) == shape(yaml.SafeLoader(text).get_single_node())


def test_bad_yaml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    data = b"goldset: x\nquestions:\n  - id: q1\n   question: [unclosed\n"
    root, problems = yamlsafe.compose(path, data)
    assert root is None and len(problems) == 1
    assert problems[0].where.startswith(f"{path}:") and "not valid YAML" in problems[0].message


def test_deep_nesting_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    root, problems = yamlsafe.compose(path, b"[" * 200_000 + b"]" * 200_000)
    assert root is None and problems and "not valid YAML" in problems[0].message
