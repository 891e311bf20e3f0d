"""Plan: the generated bash and plan() agree exactly, on every train-type config of the corpus
in all four modes, on generated specs, and when steps fail."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, reject, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from helpers.difftest import Case, Harness
from helpers.sweep import by_shape, examples, rotate
from tipcgen.dialects import detect, get_layout
from tipcgen.errors import UsageError
from tipcgen.lower.text import config_text
from tipcgen.plan.planner import plan_config, runner_for
from tipcgen.script.decode import decode
from tipcgen.script.lines import header_name
from tipcgen.spec.ir import Suite
from tipcgen.spec.modes import MODES


def _train_configs(corpus: Path) -> list[tuple[str, str]]:
    out = []
    for path in sorted(corpus.rglob("*.txt")):
        try:
            lines = decode(str(path), path.read_bytes()).lines
        except Exception:
            continue
        layout, _ = detect(lines)
        if layout:
            out.append((str(path), layout))
    return out


def _manifest_train_configs(corpus: Path) -> dict[str, str]:
    """corpus path -> repo of every MANIFEST.tsv entry whose first line is a train_params header
    (the configs test_train_inference_python.sh reads), whatever their number."""
    out = {}
    with open(corpus / "MANIFEST.tsv", encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            text = (corpus / row["corpus_path"]).read_bytes().decode("utf-8", "replace").lstrip("\ufeff")
            first = next((line.rstrip("\r") for line in text.split("\n") if line.strip()), "")
            if header_name(first) == "train_params":
                out[row["corpus_path"]] = row["repo"]
    return out


@pytest.mark.corpus
def test_corpus_bash_equals_plan_in_every_mode(corpus, tmp_path):
    configs = _train_configs(corpus)
    # No pinned totals (the corpus grows): every train-type config the manifest lists is tested,
    # and every repo of the manifest contributes some.
    found = {str(Path(path).relative_to(corpus)) for path, _ in configs}
    manifest = _manifest_train_configs(corpus)
    missing = sorted(set(manifest) - found)
    assert not missing, f"{len(missing)} train configs of MANIFEST.tsv have no layout: {missing[:5]}"
    for repo in sorted(set(manifest.values())):
        assert any(r == repo for p, r in manifest.items() if p in found), f"no config of {repo} is tested"
    cases = []
    # A config of each shape, each in one mode in turn (helpers/sweep.py; TIPC_FULL_SWEEP=1: every
    # config in every mode).
    for n, (path, layout) in enumerate(by_shape(configs, lambda c: Path(c[0]))):
        for mode in rotate(n, MODES):
            cases.append(
                Case(
                    path,
                    layout,
                    mode,
                    gpuid="1" if mode == "whole_infer" and (n // len(MODES)) % 2 else None,
                    cuda="7" if n % 3 == 0 else None,
                )
            )
        # The runners that also take klquant_whole_infer (PaddleSeg, PaddleVideo, PaddleDetection):
        # every 4th of their configs in it too, with a GPU id every other time.
        if n % 4 == 0 and "klquant_whole_infer" in runner_for(get_layout(layout)).MODES:
            cases.append(Case(path, layout, "klquant_whole_infer", gpuid="1" if n % 8 else None))
        # failing steps: every 8th config fails its training, every 8th+1 its export
        if n % 8 == 0:
            cases.append(Case(path, layout, "lite_train_lite_infer", fail="train.py"))
        elif n % 8 == 1:
            cases.append(Case(path, layout, "lite_train_lite_infer", fail="export"))
    assert {c.mode for c in cases} >= {*MODES, "klquant_whole_infer"}
    mismatches = Harness(tmp_path).run(cases)
    assert not mismatches, f"{len(mismatches)} of {len(cases)} runs disagree; first: {mismatches[0]}"


@pytest.mark.corpus
def test_corpus_bash_equals_plan_for_the_non_default_runners(corpus, tmp_path):
    """The runners a spec picks with `runner:` (not the dialect's first), on their repo's corpus
    configs in every mode, with failing steps: paddleocr's ocr_head on PaddleOCR's configs."""
    cases = []
    for repo, layout, runner in (("PaddleOCR", "paddleocr", "ocr_head"),):
        configs = [path for path, found in _train_configs(corpus / repo) if found == layout]
        assert configs, f"no {layout} config in the corpus's {repo}"
        for n, path in enumerate(configs):
            for mode in MODES:
                gpuid = "1" if mode == "whole_infer" and n % 2 == 0 else None
                cases.append(Case(path, layout, mode, gpuid=gpuid, cuda="7" if n % 2 else None, runner=runner))
            for fail in ("train.py", "export", "predict_"):
                cases.append(Case(path, layout, "lite_train_lite_infer", fail=fail, runner=runner))
            cases.append(Case(path, layout, "whole_infer", fail="predict_", runner=runner))
    mismatches = Harness(tmp_path).run(cases)
    assert not mismatches, f"{len(mismatches)} of {len(cases)} runs disagree; first: {mismatches[0]}"


# ---- generated specs

IDS = st.lists(st.integers(0, 7), min_size=1, max_size=3, unique=True)
IP = st.sampled_from(["10.0.0.1", "10.0.0.2", "192.168.1.10", "172.16.0.3"])
TARGET = st.one_of(
    st.just("cpu"),
    st.integers(0, 7),
    IDS,
    st.builds(lambda ips, g: {"ips": ips, "gpus": g}, st.lists(IP, min_size=2, max_size=3, unique=True), IDS),
    st.builds(lambda n: {"cpus": n}, st.integers(1, 4)),
    st.builds(
        lambda ips, n: {"ips": ips, "cpus": n}, st.lists(IP, min_size=2, max_size=3, unique=True), st.integers(1, 2)
    ),
)
WORD = st.text(alphabet=st.sampled_from("abcxyz019_./-"), min_size=1, max_size=8)
VALUE = st.one_of(WORD, st.sampled_from(["True", "False", "null", "", " ", "fp32", "fp16", "int8", "amp"]))
KEY = st.one_of(st.just(None), st.sampled_from(["--a", "-o Global.x", "Global.y", "--use_gpu"]))
LIST = st.one_of(
    st.none(),
    st.builds(lambda k, v: {"key": k, "values": v}, KEY, st.lists(VALUE.filter(lambda x: "|" not in x), max_size=3)),
)
FLAG = st.one_of(st.none(), st.builds(lambda k, v: {"key": k, "value": v}, KEY, VALUE))
TRAIN_MODES = ["lite_train_lite_infer", "lite_train_whole_infer", "whole_train_whole_infer"]
MODE_FLAG = st.one_of(
    st.none(),
    st.builds(
        lambda k, d: {"key": k, "by_mode": d},
        KEY,
        st.dictionaries(st.sampled_from(TRAIN_MODES), st.integers(1, 9), max_size=3),
    ),
)
COMMAND = st.one_of(st.none(), st.sampled_from(["tools/train.py -c a.yml -o ", "train.py", 'x.py --s="3,4"', "null"]))
TRAINER = st.builds(
    lambda n, t, e: {k: v for k, v in (("name", n), ("train", t), ("export", e)) if v is not None},
    st.one_of(st.none(), st.sampled_from(["norm_train", "pact_train", "amp_train"])),
    COMMAND,
    COMMAND,
)


@st.composite
def suites(draw):
    """(layout, the Suite's data): validated by the test, which rejects what the Suite refuses."""
    layout = draw(st.sampled_from(["paddleocr", "paddleclas", "paddlevideo", "paddleseg", "models"]))
    topology = draw(st.lists(TARGET, min_size=1, max_size=3))
    data = {
        "file": "t.txt",
        "model_name": "m",
        "topology": topology,
        "train": {
            "device": {
                "key": draw(st.sampled_from(["Global.use_gpu", "--device", "null"])),
                "values": draw(
                    st.lists(
                        st.sampled_from(["True", "gpu", "cpu"]), min_size=len(topology), max_size=len(topology) + 1
                    )
                ),
            },
            "epochs": draw(MODE_FLAG),
            "batch_size": draw(MODE_FLAG),
            "pretrained": draw(FLAG),
            "save_dir": draw(FLAG),
            "model_file": draw(WORD),
            "run": draw(
                st.lists(
                    st.sampled_from(["norm_train", "pact_train", "fpgm_train", "amp_train"]), min_size=1, max_size=3
                )
            ),
        },
        "trainers": {"norm": draw(TRAINER)},
        "eval": {"command": draw(COMMAND)},
        "export": {"save_dir": draw(FLAG), "weights": draw(FLAG)},
        "inference": {
            "script": "infer.py",
            "use_gpu": draw(LIST),
            "batch_size": draw(LIST),
            "model_dir": draw(FLAG),
            "data": draw(FLAG),
            "benchmark": draw(FLAG),
        },
        "whole_infer": draw(
            st.lists(
                st.builds(
                    lambda m, e, q: {"model": m, "export": e, "quant": q},
                    WORD,
                    COMMAND,
                    st.sampled_from([True, False, "Fasle"]),
                ),
                max_size=2,
            )
        ),
    }
    if layout != "models":
        data["train"]["autocast"] = draw(
            st.one_of(
                st.none(),
                st.builds(
                    lambda v: {"key": "Global.auto_cast", "values": v},
                    st.lists(st.sampled_from(["fp32", "amp", "null"]), min_size=1, max_size=2),
                ),
            )
        )
        data["trainers"]["pact"] = draw(TRAINER)
        data["export"]["inference_dir" if layout in ("paddleocr", "paddlevideo") else "save_dir"] = (
            draw(st.one_of(st.none(), WORD)) if layout in ("paddleocr", "paddlevideo") else data["export"]["save_dir"]
        )
        for name in ("mkldnn", "threads", "tensorrt", "precision"):
            data["inference"][name] = draw(LIST)
    if layout == "models":
        data["whole_infer"] = data["whole_infer"][:1]
        for m in data["whole_infer"]:
            m.pop("quant")
    return layout, data


# The runners of each layout a spec may pick (None: the dialect's first).
RUNNER_CHOICES = {"paddleocr": [None, "ocr_head"]}


@st.composite
def cases(draw):
    """(layout, suite data, mode, argv substring to fail on, TIPC_NODE_IP, FLAGS_START_PORT, runner)."""
    layout, data = draw(suites())
    mode = draw(st.sampled_from(MODES))
    fail = draw(st.sampled_from([None, None, "train.py", "infer.py", "x.py"]))
    node_ip, port = draw(st.one_of(st.none(), IP)), draw(st.sampled_from([None, "17000"]))
    return layout, data, mode, fail, node_ip, port, draw(st.sampled_from(RUNNER_CHOICES.get(layout, [None])))


def _suite(topology, **inference) -> dict:
    """A small CPU suite, for the explicit examples."""
    return {
        "file": "t.txt",
        "model_name": "m",
        "topology": topology,
        "train": {
            "device": {"key": "Global.use_gpu", "values": ["cpu"] * len(topology)},
            "model_file": "a",
            "run": ["norm_train"],
        },
        "trainers": {"norm": {"train": "train.py", "export": "x.py"}},
        "eval": {"command": None},
        "export": {"save_dir": None, "weights": None},
        "inference": {
            "script": "infer.py",
            "use_gpu": {"key": "--use_gpu", "values": ["False"]},
            "batch_size": {"key": "--bs", "values": ["1"]},
            **inference,
        },
        "whole_infer": [],
    }


# Once drawn at random on a fresh clone: a `/` in a list item that names a log file. The bash's
# redirect failed (no such directory) where the executor made the directory; both refuse it now.
SLASH_THREADS = (
    "paddleocr",
    _suite(["cpu"], threads={"key": "--cpu_threads", "values": ["/"]}),
    "lite_train_lite_infer",
    None,
    None,
    None,
    None,
)
SLASH_BATCH = (
    "models",
    _suite([0], batch_size={"key": "--bs", "values": ["a/b", "1"]}),
    "whole_infer",
    None,
    None,
    None,
    None,
)


# derandomize etc. come from the profile conftest.py loads (the same examples locally and in CI)
def _bash_equals_plan(tmp_path_factory, case):
    layout, data, mode, fail, node_ip, port, runner = case
    try:
        suite = Suite.model_validate(data)
    except ValidationError:
        reject()  # what the spec refuses never reaches a config
    root = tmp_path_factory.mktemp("gen")
    config = root / "t.txt"
    config.write_text(config_text(suite, get_layout(layout)))
    case_ = Case(
        str(config),
        layout,
        mode,
        gpuid="2" if mode == "whole_infer" else None,
        fail=fail,
        node_ip=node_ip,
        start_port=port,
        runner=runner,
    )
    mismatches = Harness(root, workers=1).run([case_])
    assert not mismatches, mismatches[0] + "\n" + config.read_text()


_HEALTH = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]


# The fast tier's sample of the property; the full-size run below is in the slow tier.
@settings(max_examples=60, suppress_health_check=_HEALTH)
@example(case=SLASH_THREADS)
@example(case=SLASH_BATCH)
@given(case=cases())
def test_generated_specs_bash_equals_plan(tmp_path_factory, case):
    _bash_equals_plan(tmp_path_factory, case)


@pytest.mark.slow
@settings(max_examples=examples(500), suppress_health_check=_HEALTH)  # 500 under TIPC_FULL_SWEEP
@example(case=SLASH_THREADS)
@example(case=SLASH_BATCH)
@given(case=cases())
def test_generated_specs_bash_equals_plan_full_size(tmp_path_factory, case):
    _bash_equals_plan(tmp_path_factory, case)


def _base_config(layout: str) -> str:
    extra = {"threads": {"key": "--cpu_threads", "values": ["2"]}} if layout == "paddleocr" else {}
    return config_text(Suite.model_validate(_suite(["cpu"], **extra)), get_layout(layout))


def test_hostile_configs_are_refused_by_bash_and_plan_alike(tmp_path):
    """Values that would put a log elsewhere, NUL and control bytes, a huge matrix: exit 2 in both."""
    ocr, models = _base_config("paddleocr"), _base_config("models")
    variants = {
        "model_name_up": (ocr, "model_name:m", "model_name:../../../escaped"),
        "model_name_abs": (models, "model_name:m", "model_name:/tmp/escaped"),
        "model_name_dotdot": (ocr, "model_name:m", "model_name:.."),
        "threads_slash": (ocr, "--cpu_threads:2", "--cpu_threads:a/b|2"),
        "trainer_slash": (models, "trainer:norm_train", "trainer:norm_train|x/y"),
        "gpu_list_slash": (ocr, "gpu_list:-1", "gpu_list:0/1"),
        "nul": (ocr, "train.py", "tr\x00ain.py"),
        "escape": (models, "train.py", "tr\x1bain.py"),
        "matrix": (ocr, "gpu_list:-1", "gpu_list:" + "|".join(["-1"] * 5000)),
    }
    cases_ = []
    for name, (text, old, new) in variants.items():
        assert old in text, name
        path = tmp_path / f"{name}.txt"
        path.write_bytes(text.replace(old, new, 1).encode())
        layout = "models" if text is models else "paddleocr"
        for mode in ("lite_train_lite_infer", "whole_infer"):
            with pytest.raises(UsageError):
                plan_config(path.read_text(), get_layout(layout), mode)
            cases_.append(Case(str(path), layout, mode))
    mismatches = Harness(tmp_path / "h").run(cases_)
    assert not mismatches, mismatches[0]
