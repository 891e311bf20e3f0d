"""The typed fields of the other chains' suites, derived from their line tables.

A chain layout (dialects/chains/<name>.py) names each line by a role: `model_name`, `python` and
`infer_model_url` (the released inference model the chain starts from) are suite fields every
chain shares, so a model's paddle2onnx, C++ and serving configs take them from the same
`defaults` (and `tipcgen lint` names suites of one model that disagree); every other role is
`<ns>.<field>[.<field>]` and becomes a field of the suite's `<ns>` section:

- a line whose key the layout fixes holds a value (`opset: 11`), or a list of values when the
  script loops over it (`use_gpu: [True, False]`, a role in the dialect's `matrix_roles`);
- a line whose key the config chooses is a Flag (`{key: Global.use_onnx, value: True}`), or a
  ListFlag when the script loops over it.

The models are made here from the tables, so registering a chain layout is all its suites need:
the schema, validation, lowering (lower/text.py) and import (importer/fields.py) follow.
"""

from __future__ import annotations

from typing import Any, Optional

from pydantic import create_model

from tipcgen.dialects.base import Layout
from tipcgen.dialects.chains import CHAIN_LAYOUTS
from tipcgen.spec.policy import Scalar

# Roles a chain shares with the train suites' fields (lower/text.py has them already).
SHARED_ROLES = ("model_name", "python", "infer_model_url")


def role_kind(layout: Layout, role: str, listed: bool) -> str:
    """How a chain role's line is typed: "value", "values", "flag" or "list_flag"."""
    row = layout.row_for_role(role)
    if row is not None and row.key is not None:
        return "values" if listed else "value"
    return "list_flag" if listed else "flag"


def _train_namespaces() -> frozenset[str]:
    """The first parts of the train layouts' roles (`train`, `inference`, `gpu_list`...): a chain
    table that reuses them (PaddleClas's PTQ reads a train config) is typed by the train fields."""
    from tipcgen.dialects import LAYOUTS

    return frozenset(role.split(".")[0] for layout in LAYOUTS.values() for role in layout.roles)


def train_table(layout: Layout) -> bool:
    """A chain whose configs have a train table (PTQ): its suites are typed, and inherit, as train suites."""
    names = _train_namespaces()
    return any(role not in SHARED_ROLES and role.split(".")[0] in names for role in layout.roles)


def chain_roles() -> dict[str, str]:
    """{role: kind} of every chain layout's own roles. A role is a list where any script of the
    chains that read it loops over it (PaddleClas's Python serving loops over its clients, the C++
    one reads the same line once); its key must be fixed or free in every table alike."""
    listed = {role for layout in CHAIN_LAYOUTS.values() for role in layout.dialect.matrix_roles}
    train = _train_namespaces()
    kinds: dict[str, str] = {}
    for layout in CHAIN_LAYOUTS.values():
        for role in layout.roles:
            if role in SHARED_ROLES or role.split(".")[0] in train:
                continue
            kind = role_kind(layout, role, role in listed)
            if kinds.setdefault(role, kind) != kind:
                raise AssertionError(f"chain role {role} is a {kinds[role]} in one layout, a {kind} in {layout.name}")
    return kinds


def _tree(kinds: dict[str, str]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for role, kind in kinds.items():
        node = tree
        *parents, leaf = role.split(".")
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise AssertionError(f"chain role {role}: {part} is both a field and a section")
        node[leaf] = kind
    return tree


def _model(name: str, node: dict[str, Any], base: type, types: dict[str, Any]) -> type:
    fields: dict[str, Any] = {}
    for key, kind in node.items():
        if isinstance(kind, dict):
            fields[key] = (Optional[_model(f"{name}{key.title()}", kind, base, types)], None)
        elif kind == "values":
            fields[key] = (Optional[list[Scalar]], None)  # (None: unset, as every chain field)
        else:
            fields[key] = (types[kind], None)
    return create_model(name, __base__=base, **fields)


def chain_sections(base: type, flag: type, list_flag: type, reserved: tuple = ()) -> dict[str, tuple[Any, Any]]:
    """{namespace: (its model type, default None)}: the fields chain suites add to Suite (the
    spec's Model, Flag and ListFlag passed in: this module sits below spec/ir.py); `reserved`:
    the suite's own fields, which no chain section may replace."""
    types = {"value": Optional[Scalar], "flag": Optional[flag], "list_flag": Optional[list_flag]}
    tree = _tree(chain_roles())
    taken = set(getattr(base, "model_fields", {})) | set(reserved)
    clash = sorted(set(tree) & taken)
    if clash:  # a chain role named like a suite field (`export.model_url`) would replace that field
        raise AssertionError(f"chain roles {clash} name suite fields; share them through SHARED_ROLES instead")
    return {ns: (Optional[_model(f"Chain{ns.title()}", node, base, types)], None) for ns, node in tree.items()}


def inherits_all(layout_name: Any) -> bool:
    """Whether a suite of this (chain) layout takes all of `defaults`, as a train suite does."""
    layout = CHAIN_LAYOUTS.get(layout_name) if isinstance(layout_name, str) else None
    return layout is not None and train_table(layout)


def shared_defaults(defaults: dict) -> dict:
    """What of `defaults` a chain suite without a train table takes (spec/load.py, import)."""
    keep = inherited_keys()
    return {k: v for k, v in defaults.items() if k in keep}


def inherited_keys() -> frozenset[str]:
    """What a chain suite takes from `defaults` and its preset: the shared fields, step limits and
    the chains' own sections; the rest of `defaults` is the train suites' (a chain has no line
    for it, and check/spec.py refuses a field its layout cannot write)."""
    return frozenset((*SHARED_ROLES, "limits", *_tree(chain_roles())))
