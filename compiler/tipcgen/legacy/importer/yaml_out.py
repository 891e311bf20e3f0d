"""The imported spec as YAML text: small mappings inline, error-level defects commented (via ruamel)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tipcgen.legacy.importer import ImportResult


def spec_yaml(result: ImportResult, findings: dict, schema_path: str = "../generated/spec.schema.json") -> str:
    """The imported spec as readable YAML: small mappings inline, defects commented."""
    import io

    from ruamel.yaml import YAML

    doc = _commented(result.spec)
    places = [(None, doc.get("defaults"))] + [(n, s) for n, s in (doc.get("suites") or {}).items()]
    for name, node in places:
        if node is not None and node.get("allow"):
            _comment_allow(node, findings.get(name) if name else None, findings)
    yaml = YAML()
    # legacy text says True/False; YAML 1.2 reads both spellings as booleans
    yaml.representer.add_representer(
        bool, lambda rep, data: rep.represent_scalar("tag:yaml.org,2002:bool", "True" if data else "False")
    )
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    buf = io.StringIO()
    yaml.dump(doc, buf)
    n = len(result.sources)
    head = (
        f"# yaml-language-server: $schema={schema_path}\n"
        f"# Imported by tipcgen from {n} config{'s' if n != 1 else ''}: each suite's `file` and each key of"
        " `other_configs`.\n"
        "# `tipcgen build` reproduces those files byte for byte; trivia keeps what has no typed field.\n"
    )
    return head + buf.getvalue()


def _comment_allow(node: Any, own: Any, findings: dict) -> None:
    """Say after each allowed rule which upstream defect it keeps: the suite's own finding, or
    for `defaults` the first suite's and how many suites have it."""
    if node.fa.flow_style():
        node.fa.set_block_style()
    node["allow"].fa.set_block_style()
    for i, rule in enumerate(node["allow"]):
        if own is not None:
            items = [f for f in own if f.rule == rule]
            more = len(items) - 1
            note = (items[0].message + (f" (+{more} more)" if more else "")) if items else "(none here)"
        else:
            having = [name for name, items in findings.items() if any(f.rule == rule for f in items)]
            first = next((f for f in findings[having[0]] if f.rule == rule), None) if having else None
            note = f"{first.message} (in {len(having)} suite(s))" if first else "(none)"
        node["allow"].yaml_add_eol_comment(f"kept from upstream: {note}", i)


def _commented(node: Any, depth: int = 0) -> Any:
    """Plain data -> ruamel's commented nodes, flow style for small mappings (below the top two
    levels) and short scalar lists."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(node, dict):
        m = CommentedMap()
        for k, v in node.items():
            m[k] = _commented(v, depth + 1)
        if depth >= 2 and _small(node):
            m.fa.set_flow_style()
        return m
    if isinstance(node, list):
        seq = CommentedSeq(_commented(v, depth + 1) for v in node)
        if all(not isinstance(v, (dict, list)) for v in node) and len(node) <= 8:
            seq.fa.set_flow_style()
        return seq
    return node


def _small(node: dict) -> bool:
    return len(node) <= 4 and all(
        not isinstance(v, (dict, list))
        or (isinstance(v, list) and len(v) <= 8 and all(not isinstance(x, (dict, list)) for x in v))
        for v in node.values()
    )
