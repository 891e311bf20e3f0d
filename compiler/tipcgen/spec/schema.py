"""JSON Schema of a spec file, for editors (`# yaml-language-server: $schema=...`)."""

from __future__ import annotations

import json

from tipcgen.spec.ir import SpecFile, Suite


def _strip_required(node):
    if isinstance(node, dict):
        node.pop("required", None)
        for value in node.values():
            _strip_required(value)
    elif isinstance(node, list):
        for value in node:
            _strip_required(value)


def spec_schema() -> dict:
    top = SpecFile.model_json_schema(ref_template="#/$defs/{model}")
    suite = Suite.model_json_schema(ref_template="#/$defs/{model}")
    suite_defs = suite.pop("$defs", {})
    # defaults and suites hold partial suites: merged, then validated as a whole.
    _strip_required(suite_defs)
    partial = dict(suite)
    partial.pop("required", None)
    partial["title"] = "Suite (partial: merged over `defaults`)"
    # `sections: null`: none of the inherited sections (the model's before-validator takes it).
    sections = partial["properties"]["sections"]
    partial["properties"]["sections"] = {"anyOf": [sections, {"type": "null"}]}
    defs = top.setdefault("$defs", {})
    defs.update(suite_defs)
    defs["Suite"] = partial
    top["properties"]["defaults"] = {"$ref": "#/$defs/Suite", "description": "Shared by every suite."}
    top["properties"]["presets"] = {
        "type": "object",
        "description": "Named partial suites, merged between `defaults` and a suite with `preset: NAME`.",
        "additionalProperties": {"anyOf": [{"$ref": "#/$defs/Suite"}, {"type": "null"}]},
    }
    top["properties"]["suites"] = {
        "type": "object",
        "description": "One entry per legacy config file; each is merged over `defaults` (and its `preset`).",
        "additionalProperties": {"$ref": "#/$defs/Suite"},
        "minProperties": 1,
    }
    top["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    top["title"] = "tipcgen spec"
    return top


def schema_text() -> str:
    return json.dumps(spec_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
