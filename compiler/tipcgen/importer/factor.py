"""Several suites -> one spec: suite and model names, and the values every suite shares as `defaults`."""

from __future__ import annotations

import json
import os
import re
from typing import Optional

from tipcgen.dialects import get_layout
from tipcgen.spec.chain_fields import SHARED_ROLES, inherited_keys, inherits_all, shared_defaults
from tipcgen.spec.ir import is_chain_layout
from tipcgen.spec.load import MODEL_NAME_VAR
from tipcgen.spec.policy import is_name

_SUITE_NAME = [
    (re.compile(r"^train_infer_python$"), "normal"),
    (re.compile(r"^train_linux_gpu_normal_normal_infer_python_linux_gpu_cpu$"), "normal"),
    (re.compile(r"^train_linux_gpu_fleet_normal_infer_python_linux_gpu_cpu$"), "fleet"),
    (re.compile(r"^train_linux_gpu_normal_amp_infer_python_linux_gpu_cpu$"), "amp"),
    (re.compile(r"^train_linux_gpu_fleet_amp_infer_python_linux_gpu_cpu$"), "fleet_amp"),
    (re.compile(r"^train_linux_gpu_(\w+?)_infer_python_linux_gpu_cpu$"), None),
    (re.compile(r"^train_(\w+?)_infer_python$"), None),
    # other chains (PaddleClas names): `[KL_]linux_gpu_normal_normal_paddle2onnx_python_linux_cpu`
    # -> `[KL_]paddle2onnx_python`, `lite_arm_cpu_cpp` -> `lite_arm_cpu_cpp`
    (re.compile(r"^(?:(\w+?)_)?linux_gpu_normal_normal_(\w+?)_linux_(?:gpu_)?cpu$"), "chain"),
    # PaddleOCR's Lite configs (run on the device): `model_linux_gpu_normal_normal_lite_cpp_arm_cpu`
    # -> `model_lite_cpp_arm_cpu`
    (re.compile(r"^(?:(\w+?)_)?linux_gpu_normal_normal_(lite_\w+)$"), "chain"),
]


def suite_name(file: str, model_names: list[str]) -> str:
    stem = os.path.splitext(os.path.basename(file))[0]
    while stem.endswith(".txt"):
        stem = stem[:-4]
    for name in sorted(model_names, key=len, reverse=True):
        if stem.startswith(name + "_"):
            stem = stem[len(name) + 1 :]
            break
    for pattern, fixed in _SUITE_NAME:
        m = pattern.match(stem)
        if m and fixed == "chain":
            return "_".join(g for g in m.groups() if g)
        if m:
            return fixed or m.group(1)
    return re.sub(r"[^A-Za-z0-9_]", "_", stem) or "suite"


def name_suites(suites: dict, model_names: list[str]) -> dict:
    """{config file name: suite} -> {suite name: suite}. A directory of several models (ResNet50,
    ResNet50_vd...) names each suite after its model and kind (`ResNet50_vd_amp`); names that
    still repeat are numbered."""
    several = len(set(model_names)) > 1
    named: dict = {}
    for file, data in suites.items():
        base = suite_name(file, model_names)
        # (a model name may hold what a suite name may not: `mobilenet_v3_small.nb`)
        model = re.sub(r"[^A-Za-z0-9_-]", "_", str(data.get("model_name", "")))
        if several and is_name(f"{model}_{base}"):
            base = f"{model}_{base}"
        name, n = base, 2
        while name in named:
            name, n = f"{base}_{n}", n + 1
        named[name] = data
    return named


def model_dir_name(paths: list[str], model_names: list[str]) -> str:
    """The spec's model: the configs' directory when they share one named like a model, else a model_name."""
    parent = os.path.basename(os.path.dirname(os.path.abspath(paths[0])))
    if is_name(parent or "") and len({os.path.dirname(os.path.abspath(p)) for p in paths}) == 1:
        return parent
    for name in model_names:
        if is_name(name):
            return name
    return "model"


# Mappings whose order is part of the emitted text: shared whole or not at all, because a merge
# puts the defaults' keys first.
_ORDERED = {"by_mode", "sections"}


# Fields that name the suite itself: never written with `${model_name}`.
_OWN = {"file", "model_name", "doc", "layout"}


def templated(suite: dict) -> dict:
    """The suite with its model_name written `${model_name}` in its text (load expands it back,
    exactly: `$` cannot occur in config text), so suites of several models share values."""
    name = suite.get("model_name")
    if not isinstance(name, str) or len(name) < 3:
        return suite
    return {k: (v if k in _OWN else _template(v, name)) for k, v in suite.items()}


def _template(value, name: str):
    if isinstance(value, str):
        return value.replace(name, MODEL_NAME_VAR)
    if isinstance(value, dict):
        return {k: _template(v, name) for k, v in value.items()}
    if isinstance(value, list):
        return [_template(v, name) for v in value]
    return value


def factor_defaults(named: dict, lenient: bool = False) -> tuple[dict, dict]:
    """(defaults, suites without them) when several suites share values; else ({}, the suites).

    `lenient` also shares a key some suites lack (a truncated config's missing sections): the
    caller must check the result still rebuilds those configs exactly, and else import strictly."""
    if len(named) <= 1:
        return {}, named
    named = {n: templated(d) for n, d in named.items()}
    # Another chain's suite inherits only the shared fields (spec/load.py): the train suites'
    # values make the defaults when there are any.
    train = [d for d in named.values() if not is_chain_layout(d.get("layout"))]
    common = _common(train if len(train) > 1 else list(named.values()), lenient)
    common.pop("file", None)
    common.pop("layout", None)
    common.pop("allow", None)  # per suite: validation refuses an inherited allow
    if not common:
        return {}, named
    return common, {n: _minus(d, _chain_common(d, common)) for n, d in named.items()}


def _chain_common(suite: dict, common: dict) -> dict:
    """What of the shared values a suite inherits: all of them for a train suite; for another
    chain's, the shared fields its layout has a line for (a cpp config has no `python`)."""
    layout = suite.get("layout")
    if not is_chain_layout(layout) or inherits_all(layout):
        return common
    keep, roles = inherited_keys(), set(get_layout(str(layout)).roles)
    return {k: v for k, v in common.items() if k in keep and (k not in SHARED_ROLES or k in roles)}


def factor_presets(named: dict, defaults: dict, model_names: list[str], headers: dict) -> tuple[dict, dict]:
    """(presets, suites using them): suites of the same kind (the `amp` configs of several
    models, say) share what they hold beyond `defaults` as a preset named after the kind.
    `named` are the suites over `defaults`; trailing sections stay with the suites; `headers`
    are the layout's header lines (what a suite without `trivia.headers` has)."""
    groups: dict = {}
    for name, data in named.items():
        groups.setdefault(suite_name(str(data.get("file", "")), model_names), []).append(name)
    presets: dict = {}
    out = dict(named)
    for kind, members in groups.items():
        if len(members) < 3 or not is_name(kind):
            continue
        start = _kind_base([named[m] for m in members], defaults, headers)
        if start is None:
            continue  # (one file-name kind, several chains: no preset)
        # Compared as the values suites end up with: the Spec's defaults under `defaults`.
        effective = merge(merge(_model_defaults(), {"trivia": {"headers": start[1]}}), start[0])
        full = {m: merge(effective, _file_templated(named[m])) for m in members}
        common = _common(list(full.values()), majority=True)
        for key in ("model_name", "layout", "doc", "preset", "sections", "allow"):
            common.pop(key, None)
        preset = _diff(common, effective)
        if not preset:
            continue
        base = merge(effective, preset)
        using = {}
        for m in members:
            rest = _diff(full[m], base)
            if "sections" in named[m]:
                rest["sections"] = named[m]["sections"]
            if "file" in rest:
                rest["file"] = named[m]["file"]  # its own name: no pattern needed
            head = {k: rest.pop(k) for k in ("file", "model_name") if k in rest}
            using[m] = {**head, "preset": kind, **rest}
        if "file" in preset:  # the pattern first: it says which configs the preset is for
            preset = {"file": preset.pop("file"), **preset}
        if _size(preset) + sum(map(_size, using.values())) < sum(_size(named[m]) for m in members):
            presets[kind] = preset
            out.update(using)
    return presets, out


def _kind_base(members: list[dict], defaults: dict, headers: dict) -> Optional[tuple[dict, dict]]:
    """(the defaults, the header lines) suites of one kind start from: another chain's suites
    take only the shared defaults (spec/load.py) and have their layout's headers; None when
    the kind mixes chains."""
    chains = {m["layout"] if is_chain_layout(m.get("layout")) else "" for m in members}
    if len(chains) > 1:
        return None
    own = chains.pop()
    if not own or inherits_all(own):
        return defaults, headers
    own_headers = {r.name: r.text for r in get_layout(own).rows if r.kind == "header"}
    return shared_defaults(defaults), own_headers


def _size(data) -> int:
    """About how many characters `data` takes in a spec (a preset must make the spec smaller)."""
    return len(json.dumps(data, default=str))


def _file_templated(suite: dict) -> dict:
    """The suite without its sections, its file named with `${model_name}` (so that the configs
    of one kind, `${model_name}_train_amp_infer_python.txt`, share one file pattern)."""
    out = {k: v for k, v in suite.items() if k != "sections"}
    name, file = suite.get("model_name"), suite.get("file")
    if isinstance(name, str) and len(name) >= 3 and isinstance(file, str):
        out["file"] = file.replace(name, MODEL_NAME_VAR)
    return out


def _diff(data: dict, base: dict) -> dict:
    """What `data` says beyond `base` (both hold every key: they are merged over the Spec's defaults)."""
    out = {}
    for key, value in data.items():
        if key not in base:
            out[key] = value
        elif key not in _ORDERED and isinstance(value, dict) and isinstance(base[key], dict):
            rest = _diff(value, base[key])
            if rest:
                out[key] = rest
        elif not _same(value, base[key], key in _ORDERED):
            out[key] = value
    return out


def _common(dicts: list, lenient: bool = False, majority: bool = False) -> dict:
    """What the dicts share: for a key every dict has, mappings recurse, and any other value the
    most dicts hold (two or more, and at least a third; with `majority`, more than half) is
    shared; the others keep theirs as an override. A key some dict lacks stays out (a merge
    cannot take a default away), unless `lenient` and most dicts have it."""
    out = {}
    keys = list(dict.fromkeys(k for d in dicts for k in d))
    for key in keys:
        if key == "sections":  # a suite can drop a shared section: no key needs all suites
            shared = _common_sections([d.get(key) or {} for d in dicts])
            if shared:
                out[key] = shared
            continue
        having = [d for d in dicts if key in d]
        if len(having) < len(dicts) and not (lenient and len(having) * 2 > len(dicts)):
            continue
        values = [d[key] for d in having]
        if key not in _ORDERED and all(isinstance(v, dict) for v in values):
            sub = _common(values, lenient, majority)
            if sub:
                out[key] = sub
            continue
        value, count = _most_common(values)
        enough = count * 2 > len(dicts) if majority else count * 3 >= len(dicts)
        if count >= 2 and enough:
            out[key] = value
    return out


def _common_sections(values: list) -> dict:
    """The trailing sections suites share, in an order every suite's follows. A shared section
    holds every key any suite gives it, in an order each suite's keys follow (a suite with fewer
    keys, or another order, says which in `trivia.section_keys`), with the most common values
    (the others override them). A suite lacking a shared section says `name: null` (or
    `sections: null` for none). A merge puts the shared sections first, so a section is shared
    only when two or more suites have it and no suite has a section of its own before it."""
    orders = [list(v) for v in values]
    longest = max(orders, key=len)
    if not all(_subsequence(o, longest) for o in orders):
        return {}
    names = []
    for name in longest:
        if sum(name in v for v in values) >= 2 and _key_order([v[name] for v in values if name in v]) is not None:
            names.append(name)
    while True:  # a suite's own section must come after every shared one it has
        late = {n for o in orders for i, n in enumerate(o) if n in names and any(m not in names for m in o[:i])}
        if not late:
            break
        names = [n for n in names if n not in late]
    out: dict = {}
    for name in names:
        having = [v[name] for v in values if name in v]
        out[name] = {k: _most_common([h[k] for h in having if k in h])[0] for k in _key_order(having) or ()}
    return out


def _key_order(sections: list[dict]) -> Optional[list]:
    """An order of every key of `sections` that each section's keys follow, or None: the
    longest section's, when the others' keys are in it in its order."""
    longest: list = max((list(s) for s in sections), key=len)
    keys = set(longest)
    if all(set(s) <= keys and _subsequence(list(s), longest) for s in sections):
        return longest
    return None


def _subsequence(items: list, of: list) -> bool:
    it = iter(of)
    return all(any(x == y for y in it) for x in items)


def _minus_sections(own: dict, shared: dict) -> tuple:
    """(a suite's sections over the shared ones, its `trivia.section_keys`): `null` for a shared
    section it lacks (`null` for all of them when it has none), the keys whose values differ,
    its own sections; and the keys of a shared section it has fewer of."""
    if not own:
        return None, {}
    out: dict = {}
    keys: dict = {}
    for name, params in shared.items():
        if name not in own:
            out[name] = None
            continue
        rest = {k: v for k, v in own[name].items() if not _same(v, params[k], False)}
        if rest:
            out[name] = rest
        if list(own[name]) != list(params):
            keys[name] = list(own[name])
    out.update((name, params) for name, params in own.items() if name not in shared)
    return out, keys


def _same(a, b, ordered: bool) -> bool:
    if ordered and isinstance(a, dict) and isinstance(b, dict):
        return list(a.items()) == list(b.items())
    return bool(a == b) and type(a) is type(b)


def _most_common(values: list) -> tuple:
    """(the value most entries equal, how many; ties: the first), values may be unhashable
    (lists, mappings): counted by their repr, which tells 1, True and '1' apart, and for
    mappings their order too (a stricter `same` than ==: it can only share less)."""
    counts: dict = {}
    first: dict = {}
    for value in values:
        key = repr(value)
        counts[key] = counts.get(key, 0) + 1
        first.setdefault(key, value)
    best = max(counts, key=lambda k: counts[k])  # max keeps the first of equal counts
    return first[best], counts[best]


def _minus(d: dict, common: dict) -> dict:
    """What `d` must say over `common`: its differing values, and for a shared value it lacks
    (lenient factoring) an explicit empty value (see _absent; mappings recurse)."""
    out = {}
    if "sections" in common:
        rest, keys = _minus_sections(d.get("sections") or {}, common["sections"])
        if rest is None or rest:
            out["sections"] = rest
        d = {k: v for k, v in d.items() if k != "sections"}
        common = {k: v for k, v in common.items() if k != "sections"}
        if keys:
            d = {**d, "trivia": {**d.get("trivia", {}), "section_keys": keys}}
    for key, value in common.items():
        if key not in d:
            out[key] = _minus({}, value) if isinstance(value, dict) else _absent(value)
    for key, value in d.items():
        if key not in common:
            out[key] = value
        elif key not in _ORDERED and isinstance(value, dict) and isinstance(common[key], dict):
            rest = _minus(value, common[key])
            if rest or not common[key]:
                out[key] = rest
        elif not _same(value, common[key], key in _ORDERED):
            out[key] = value
    return out


_DEFAULTS: dict = {}
# Fields whose validated form differs from how a spec writes them, or that name the suite.
_NOT_DEFAULTED = ("file", "model_name", "topology", "doc", "layout", "preset", "sections")


def _model_defaults() -> dict:
    """A Suite's fields as they are when no layer sets them (plain data, as a spec writes them)."""
    if not _DEFAULTS:
        from tipcgen.spec.ir import Suite

        dump = Suite.model_validate({"file": "x.txt", "model_name": "m", "topology": ["cpu"]}).model_dump()
        _DEFAULTS.update((k, v) for k, v in dump.items() if k not in _NOT_DEFAULTED)
    return _DEFAULTS


def _absent(shared):
    """How a suite says it lacks a shared value: an empty list for a list (every list field
    defaults to empty), null otherwise (every plain field defaults to null)."""
    return [] if isinstance(shared, list) else None


def merge(base: dict, over: dict) -> dict:
    """A suite's overlay over `defaults` (what factor_defaults took out, put back)."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out
