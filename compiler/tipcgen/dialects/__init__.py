"""The dialect registry: one entry per upstream family of TIPC suites.

A dialect is a `Layout` (base.py): its line table (which role sits on which line), its runner
semantics (`Layout.dialect`: the flags, log names and loops of that repo's
test_train_inference_python.sh) and its detection rule (`Layout.detect`). Emitting, importing,
linting, planning, the generated bash and the docs all read the entry, so they cannot drift
apart; `detect()` below is the one detector that import, lint, plan and run call.

Adding a dialect (the checklist)
================================
A dialect of a known family is steps 1, 2 and 5; a new family (its own upstream script) is all
five: four production files and a fixture folder.

1. Write `dialects/<name>.py`: the layout (a new table, or `variant()` of a family's table with
   the rows that differ), its `Dialect` (reuse a family's, e.g. `OCR_RUNNER`, with its knobs
   replaced; `runners` names its runners, the first the default), and `_detect(sig)`: why a
   config is of this dialect, from its keys/headers/line positions. A rule must not match
   another dialect's configs; `generic=True` marks a family's plain form, which yields to any
   specific rule that matches.
2. Register the layout in `_REGISTRY` below. Spec validation, the JSON Schema, `--layout`
   choices and lint pick the name up from here.
3. A new family's runner: `plan/runners/<runner>.py`, following the repo's
   test_train_inference_python.sh step by step (the interface is `plan.runner.Runner`), added to
   `plan/registry.py`.
4. Its bash: `templates/runner_<runner>.sh.j2` (including `runner_lib.sh.j2`), the template the
   runner's `TEMPLATE` names; tests/test_plan_differential.py holds it equal to the runner.
5. Add `tests/fixtures/<name>/`: small configs you wrote, then `python tests/update_golden.py
   <name>` for their expected specs and plans (tests/test_dialects.py checks the round trip,
   the plans and that detection picks the folder's dialect). If the corpus has the repo's
   configs, the corpus tier (`pytest -m corpus`) checks that import, plan and lint agree on
   every one of them, and tests/helpers/upstream.py runs the repo's real script against the plan.
"""

from __future__ import annotations

from typing import Optional

from tipcgen.dialects.base import Layout, Signature
from tipcgen.dialects.models import MODELS
from tipcgen.dialects.paddleclas import PADDLECLAS
from tipcgen.dialects.paddledetection import PADDLEDETECTION
from tipcgen.dialects.paddleocr import PADDLEOCR
from tipcgen.dialects.paddleseg import PADDLESEG
from tipcgen.dialects.paddlevideo import PADDLEVIDEO
from tipcgen.errors import UsageError
from tipcgen.script.lines import first_header, header_name, split_line, split_lines

_REGISTRY: tuple[Layout, ...] = (PADDLEOCR, PADDLECLAS, PADDLESEG, PADDLEVIDEO, PADDLEDETECTION, MODELS)

LAYOUTS: dict[str, Layout] = {layout.name: layout for layout in _REGISTRY}
NAMES: tuple[str, ...] = tuple(LAYOUTS)


def _suite_names() -> tuple[str, ...]:
    from tipcgen.dialects.chains import TYPED_CHAINS

    return NAMES + tuple(TYPED_CHAINS)


# What a spec suite's `layout:` may name: a train layout, or a chain with a train table.
SUITE_NAMES: tuple[str, ...] = _suite_names()

__all__ = ["LAYOUTS", "NAMES", "Layout", "Signature", "detect", "get_layout", "signature"]


def get_layout(name: str) -> Layout:
    """The registered layout `name` (a train layout, or another chain's: a suite may be either),
    or a UsageError listing the names. The one lookup of a layout by its name: the two registries
    never share a name (tests/test_dialects.py)."""
    from tipcgen.dialects.chains import CHAIN_LAYOUTS

    if name in LAYOUTS:
        return LAYOUTS[name]
    if name in CHAIN_LAYOUTS:
        return CHAIN_LAYOUTS[name]
    raise UsageError(f"unknown layout {name!r}; layouts: {', '.join(NAMES)} (other chains: {', '.join(CHAIN_LAYOUTS)})")


def signature(lines: list[str], name: str = "") -> Signature:
    """What detection rules look at; `name`: the config's file name, when known."""
    keys = tuple(split_line(line)[0] for line in lines)
    headers = frozenset(h for h in (header_name(line) for line in lines) if h)
    trainer = next((i for i, k in enumerate(keys[:30]) if k == "trainer"), None)
    return Signature(tuple(lines), keys, headers, trainer, name)


def detect(lines: list[str]) -> tuple[Optional[str], str]:
    """(layout name, why) for a train-type config's non-empty lines, or (None, why not).

    None with "fits several dialects" when two specific rules (or two generic ones) match: the
    caller reports the candidates and asks for `--layout`.
    """
    if not lines or header_name(lines[0]) != "train_params":
        return None, "the first line is not a train_params header"
    sig = signature(lines)
    if sig.trainer is None:
        return None, "no `trainer:` line in the first 30 lines"
    matches = [(layout, why) for layout in _REGISTRY if layout.detect and (why := layout.detect(sig))]
    specific = [m for m in matches if not m[0].generic]
    chosen = specific or matches
    if len(chosen) == 1:
        return chosen[0][0].name, chosen[0][1]
    if not chosen:
        return None, f"`trainer:` on line {sig.trainer}, and no dialect's rule fits ({', '.join(NAMES)})"
    names = "; ".join(f"{layout.name} ({why})" for layout, why in chosen)
    return None, f"fits several dialects: {names}"


# Configs of the other chains, told by their first line, and the script that runs each upstream.
CHAINS = {
    "serving_params": ("serving (Python)", "test_serving_infer_python.sh"),
    "serving_infer_python_params": ("serving (Python)", "test_serving_infer_python.sh"),
    "serving_infer_cpp_params": ("serving (C++)", "test_serving_infer_cpp.sh"),
    "cpp_infer_params": ("C++ inference", "test_inference_cpp.sh"),
    "paddle2onnx_params": ("paddle2onnx", "test_paddle2onnx.sh"),
    "ptq_params": ("PTQ (post-training quantization)", "test_ptq_inference_python.sh"),
    "kl_quant_params": ("PTQ (post-training quantization)", "test_ptq_inference_python.sh"),
    "pipeline_infer_python_params": ("pipeline inference", "test_pipeline_infer_python.sh"),
    "lite_params": ("Paddle-Lite", "test_lite_arm_cpp.sh"),
}


# A script that runs each block of its config with another script: the dy2static scripts write
# each `base_train`/`amp_train` block to a file and run the train runner on it.
_RUN_THROUGH = {"test_train_dy2static_python.sh": "test_train_inference_python.sh"}


def first_sections(layout: Layout) -> tuple[str, ...]:
    """The first sections a config of `layout` starts with (its first row's header name, and the
    names its header row also accepts: dy2static's `base_train` or `amp_train`); () for a table
    whose first line is not a header (Paddle-Lite's `runtime_device:`)."""
    row = layout.rows[0] if layout.rows else None
    if row is None or row.kind != "header" or not row.name:
        return ()
    return (row.name, *row.lint_keys)


def section_owners(family: Optional[str] = None) -> dict[str, tuple[str, ...]]:
    """Each first section a known kind of config starts with -> the upstream scripts that run such
    configs: every train and chain table's, and chains.SECTION_SCRIPTS (the repos' own scripts,
    for configs tipcgen does not type; its keys that are no section header, e.g. Lite's
    `runtime_device:`, are left out: the scripts read headers only). `family` (a train layout's
    name): the chain tables of that repo family only (another family's script of the same name may
    read other configs: PaddleClas's test_ptq_inference_python.sh reads train configs)."""
    from tipcgen.dialects.chains import CHAIN_LAYOUTS, SECTION_SCRIPTS, chain_family

    owners: dict[str, set] = {}
    chains = [c for c in CHAIN_LAYOUTS.values() if family is None or chain_family(c.name) == family]
    for layout in (*_REGISTRY, *chains):
        for name in first_sections(layout):
            owners.setdefault(name, set()).add(layout.dialect.script)
    for name, readers in SECTION_SCRIPTS.items():
        if header_name(f"== {name} ==") == name:
            owners.setdefault(name, set()).update(readers)
    for scripts in owners.values():
        scripts.update(_RUN_THROUGH[s] for s in list(scripts) if s in _RUN_THROUGH)
    return {name: tuple(sorted(scripts)) for name, scripts in sorted(owners.items())}


def config_readers(text: str) -> frozenset:
    """The upstream scripts that run a config like `text`: by its first section (section_owners),
    or by a first line that is no header (chains.SECTION_SCRIPTS: PaddleSeg's C++ `# model load
    config`); empty when no table knows it."""
    from tipcgen.dialects.chains import SECTION_SCRIPTS, first_section

    return frozenset(
        {*section_owners().get(first_header(text) or "", ()), *SECTION_SCRIPTS.get(first_section(text), ())}
    )


def foreign_sections(script: str, family: Optional[str] = None) -> list[tuple[str, str]]:
    """(first section, the scripts that run it) of every known kind of config `script` does not
    run: the generated script refuses such a config, naming its scripts, where upstream's read any
    file by line position and ran its values as its own keys. A section no table knows is let
    through (nothing is guessed). `family`: as section_owners' (the scripts of that repo family)."""
    owners = section_owners(family).items()
    return [(name, " or ".join(scripts)) for name, scripts in owners if script not in scripts]


def script_foreign_sections(layout: Layout) -> list[tuple[str, str]]:
    """foreign_sections of the layout's script as its generated script refuses them: by its own
    repo family's scripts where its Dialect says so (family_sections), else by every family's."""
    family = None
    if layout.dialect.family_sections:
        from tipcgen.dialects.chains import chain_family

        family = chain_family(layout.name)
    return foreign_sections(layout.dialect.script, family)


def chain_of(text: str) -> Optional[tuple[str, str]]:
    """(chain, its script) for a config of another chain than train/inference, else None."""
    from tipcgen.script.lines import header_name

    lines = split_lines(text)
    first = lines[0].strip() if lines else ""
    if first.startswith("runtime_device:"):
        return ("Paddle-Lite", "test_lite_arm_cpu_cpp.sh")
    return CHAINS.get(header_name(first) or "")


def refuse_chain(text: str, source: str) -> None:
    """A UsageError when `text` is another chain's config: the train runner must not run it."""
    chain = chain_of(text)
    if chain is not None:
        raise UsageError(
            f"{source} is a {chain[0]} config (its first line says so): test_train_inference_python.sh does not run"
            f" it, whatever --layout says; run it with its chain's script, test_tipc/{chain[1]} (tipcgen plans the"
            " train/inference chain only)"
        )


def detect_text(text: str, source: str) -> Layout:
    """The layout of a legacy config's text, or a UsageError naming why none (or several) fit."""
    refuse_chain(text, source)
    name, why = detect(split_lines(text))
    if name is None:
        raise UsageError(f"{source}: cannot tell this config's dialect: {why}; pass --layout ({', '.join(NAMES)})")
    return LAYOUTS[name]
