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

A value is typed by what the chain's scripts do with it (spec/policy.py): one word of data
(ChainWord: an argument, a sed replacement, a device's shell line), or, for a role of the
dialect's `command_roles`, a command fragment (ChainCommand); a flag's key is one word (ChainKey).

The models are made here from the tables, so registering a chain layout is all its suites need:
the schema, validation, lowering (lower/text.py) and import (importer/fields.py) follow.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from types import MappingProxyType
from typing import Any, Optional

from pydantic import Field, create_model

from tipcgen.dialects.base import Layout
from tipcgen.dialects.chains import CHAIN_LAYOUTS
from tipcgen.spec.policy import ChainCommand, ChainKey, ChainWord

# Roles a chain shares with the train suites' fields (lower/text.py has them already).
SHARED_ROLES = ("model_name", "python", "infer_model_url")


def role_kind(layout: Layout, role: str, listed: bool) -> str:
    """How a chain role's line is typed: "value", "values", "flag" or "list_flag"."""
    row = layout.row_for_role(role)
    if row is not None and row.key is not None:
        return "values" if listed else "value"
    return "list_flag" if listed else "flag"


@cache  # the tables are fixed when the modules load: validation asks for every suite
def _train_namespaces() -> frozenset[str]:
    """The first parts of the train layouts' roles (`train`, `inference`, `gpu_list`...): a chain
    table that reuses them (PaddleClas's PTQ reads a train config) is typed by the train fields."""
    from tipcgen.dialects import LAYOUTS

    return frozenset(role.split(".")[0] for layout in LAYOUTS.values() for role in layout.roles)


def train_table(layout: Layout) -> bool:
    """A chain whose configs have a train table (PTQ): its suites are typed, and inherit, as train suites."""
    names = _train_namespaces()
    return any(role not in SHARED_ROLES and role.split(".")[0] in names for role in layout.roles)


@cache
def chain_roles() -> Mapping[str, str]:
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
    return MappingProxyType(kinds)


@cache
def command_roles() -> frozenset[str]:
    """The chain roles whose value is a command fragment (typed ChainCommand)."""
    return frozenset(role for layout in CHAIN_LAYOUTS.values() for role in layout.dialect.command_roles)


def _tree(kinds: Mapping[str, str]) -> dict[str, Any]:
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


def _model(name: str, node: dict[str, Any], base: type, types: dict[str, Any], path: str = "") -> type:
    fields: dict[str, Any] = {}
    for key, kind in node.items():
        role = f"{path}{key}"
        if isinstance(kind, dict):
            fields[key] = (Optional[_model(f"{name}{key.title()}", kind, base, types, f"{role}.")], None)
        elif kind == "values":
            fields[key] = (Optional[list[ChainWord]], None)  # (None: unset, as every chain field)
        elif kind == "value":
            fields[key] = (Optional[ChainCommand if role in command_roles() else ChainWord], None)
        else:
            fields[key] = (types[kind], None)
    return create_model(name, __base__=base, **fields)


def chain_sections(base: type, flag: type, list_flag: type, reserved: tuple = ()) -> dict[str, tuple[Any, Any]]:
    """{namespace: (its model type, default None)}: the fields chain suites add to Suite (the
    spec's Model, Flag and ListFlag passed in: this module sits below spec/ir.py); `reserved`:
    the suite's own fields, which no chain section may replace."""
    # a chain's flags: their key and value one word each (Flag's own are any config text)
    chain_flag: type = create_model(
        "ChainFlag", __base__=flag, key=(Optional[ChainKey], None), value=(Optional[ChainWord], None)
    )
    chain_list_flag: type = create_model(
        "ChainListFlag",
        __base__=list_flag,
        key=(Optional[ChainKey], None),
        values=(list[ChainWord], Field(default_factory=list)),
    )
    types = {"flag": Optional[chain_flag], "list_flag": Optional[chain_list_flag]}
    tree = _tree(chain_roles())
    taken = set(getattr(base, "model_fields", {})) | set(reserved)
    clash = sorted(set(tree) & taken)
    if clash:  # a chain role named like a suite field (`export.model_url`) would replace that field
        raise AssertionError(f"chain roles {clash} name suite fields; share them through SHARED_ROLES instead")
    return {
        ns: (Optional[_model(f"Chain{ns.title()}", node, base, types, f"{ns}.")], None) for ns, node in tree.items()
    }


def inherits_all(layout_name: Any) -> bool:
    """Whether a suite of this (chain) layout takes all of `defaults`, as a train suite does."""
    layout = CHAIN_LAYOUTS.get(layout_name) if isinstance(layout_name, str) else None
    return layout is not None and train_table(layout)


def shared_defaults(defaults: dict) -> dict:
    """What of `defaults` a chain suite without a train table takes (spec/load.py, import)."""
    keep = inherited_keys()
    return {k: v for k, v in defaults.items() if k in keep}


@cache
def inherited_keys() -> frozenset[str]:
    """What a chain suite takes from `defaults` and its preset: the shared fields, step limits and
    the chains' own sections; the rest of `defaults` is the train suites' (a chain has no line
    for it, and check/spec.py refuses a field its layout cannot write)."""
    return frozenset((*SHARED_ROLES, "limits", *_tree(chain_roles())))
