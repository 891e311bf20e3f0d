"""Every prepare.sh mode in use survives the import, a fetch of no URL is skipped as upstream's
failing one is, and the recording harness shows waits and time caps instead of hiding them.

- the modes: those a repo's prepare.sh tests for and those its scripts and docs/ call it with;
  a train config is also prepared for `benchmark_train` / `klquant_whole_infer` when the repo uses
  them, the generated prepare.sh takes them (and does the repo's commands), and a mode it cannot
  carry is a lost mode: the migration is not ready;
- `wget -nc null` / `wget -nc :` (a config's unset URL field): upstream's fails and its script
  goes on; import skips it, named (`no-url-fetch`), so the generated prepare.sh does not abort;
- the oracle's `sleep` shim records `sleep ARG`; its `timeout` shim records `timeout DURATION`
  before every command it runs: PaddleClas's `sleep 5`s are a named deviation, a fork that caps
  training only in benchmark_train differs from PaddleDetection's runner (which caps every one).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import REPO
from helpers.machine import bound
from helpers.upstream import corpus_dir, upstream_dir
from tipcgen.check.spec import load_spec, load_spec_text
from tipcgen.cli import app
from tipcgen.emit.files import build_files
from tipcgen.errors import SpecError
from tipcgen.importer.prepare_steps import (
    DEVIATIONS,
    compare_effects,
    no_url_fetch,
    steps_from_ops,
    upstream_effects,
)
from tipcgen.importer.prepare_trace import Op, trace_prepare
from tipcgen.migrate.prepare_diff import compare_prepare, plan_lines

FIXTURES = REPO / "tests" / "fixtures"
runner = CliRunner()


# ---- a fetch of no URL


@pytest.mark.parametrize(
    "argv",
    [
        ("wget", "-nc", "null"),
        ("wget", "-nc", ":"),
        ("wget", "-nc"),
        ("wget", "-nc", "", "--no-check-certificate"),
        ("wget", "-nc", "null", "--no-check-certificate"),
        ("wget", "-P", "./pretrained_model", "null"),
        ("wget", "-nc", "null", ":"),
        ("curl", "-s", "-o", "model.tar", "null"),
        ("curl", "null"),
    ],
)
def test_a_fetch_of_no_url_is_no_fetch(argv):
    assert no_url_fetch(argv)
    imported = steps_from_ops([Op(".", argv), Op(".", ("python", "setup.py", "install"))])
    assert imported.steps == [{"run": "python setup.py install"}], "skipped, not a `run` step that would fail"
    assert imported.deviations == ["no-url-fetch"] and "no-url-fetch" in DEVIATIONS
    diff = compare_effects(upstream_effects([Op(".", argv)]), [])
    assert diff.verdict == "faithful" and diff.deviations == ["no-url-fetch"]


@pytest.mark.parametrize(
    "argv",
    [
        ("wget", "-nc", "https://example.invalid/null"),  # a URL ending in null is a URL
        ("wget", "-nc", "null", "https://example.invalid/a.tar"),  # one real URL: not nothing
        ("wget", "-O", "null", "https://example.invalid/a.tar"),  # `null` is the output file here
        ("wget", "-P", "null", "https://example.invalid/a.tar"),  # ... the directory here
        ("wget", "-nc", "model.tar"),  # a relative name (not typed: a `run` step, as before)
        ("curl", "-o", "null", "https://example.invalid/a.tar"),
        ("tar", "xf", "null"),  # only wget and curl fetch
        ("rm", "-rf", ":"),
    ],
)
def test_a_fetch_with_something_to_fetch_is_not_skipped(argv):
    assert not no_url_fetch(argv)
    imported = steps_from_ops([Op(".", argv)])
    assert imported.steps and "no-url-fetch" not in imported.deviations
    diff = compare_effects(upstream_effects([Op(".", argv)]), [])
    assert diff.verdict == "CHANGED", "dropping it is a difference"


# ---- the modes in use, imported and generated

# A prepare.sh like upstream's: benchmark_train and a unset-URL download; a chain mode whose
# configs no typed suite covers (cpp_infer) is only tested for.
PREPARE = r"""#!/bin/bash
FILENAME=$1
MODE=$2
dataline=$(cat ${FILENAME})
IFS=$'\n'
lines=(${dataline})
model_name=$(echo "${lines[1]}" | cut -d: -f2)
pretrained=${lines[35]#*:}
if [ ${MODE} = "lite_train_lite_infer" ]; then
    wget -nc -P ./dataset https://example.invalid/data/little_train.tar
    wget -nc ${pretrained}
    wget -nc :
    wget -nc ${no_such_value} --no-check-certificate
elif [ ${MODE} = "benchmark_train" ]; then
    pip install -r requirements.txt
    wget -nc -P ./dataset https://example.invalid/data/bench.tar
elif [ ${MODE} = "cpp_infer" ]; then
    wget -nc https://example.invalid/opencv.tar.gz
fi
"""
DOC = "Run `bash test_tipc/prepare.sh test_tipc/configs/toy/x.txt 'klquant_whole_infer'` first.\n"


def _repo(tmp_path: Path, prepare: str = PREPARE) -> Path:
    root = tmp_path / "PaddleClas"
    configs = root / "test_tipc" / "configs" / "toy"
    configs.mkdir(parents=True)
    for src in sorted((FIXTURES / "paddleclas").glob("*.txt")):
        shutil.copy(src, configs / src.name)
    (root / "test_tipc" / "prepare.sh").write_text(prepare)
    (root / "test_tipc" / "docs").mkdir()
    (root / "test_tipc" / "docs" / "bench.md").write_text(DOC)
    return root


def _import(root: Path, out: Path):
    cwd = os.getcwd()
    os.chdir(root)
    try:
        return runner.invoke(app, ["import", "test_tipc/configs", "--out", str(out)])
    finally:
        os.chdir(cwd)


def _build(spec, tree: Path) -> Path:
    for rel, data in build_files(spec).items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_bytes(data)
    return tree / "test_tipc"


@pytest.mark.sandbox
def test_every_mode_in_use_is_imported_and_the_generated_prepare_does_what_the_repos_does(tmp_path):
    from tipcgen.importer.prepare_import import repo_prepare_modes, train_config_modes

    root = _repo(tmp_path)
    script = root / "test_tipc" / "prepare.sh"
    # tested for by the script, or called so by its docs (a usage line's `MODE` placeholder is none)
    assert repo_prepare_modes(script) == {
        "lite_train_lite_infer",
        "benchmark_train",
        "cpp_infer",
        "klquant_whole_infer",
    }
    modes = train_config_modes(script)
    assert modes[4:] == ("benchmark_train", "klquant_whole_infer")
    result = _import(root, tmp_path / "specs")
    assert result.exit_code == 0, result.output
    spec = load_spec(str(tmp_path / "specs/toy.yml"))
    assert set(spec.prepare) >= {"lite_train_lite_infer", "benchmark_train", "klquant_whole_infer"}
    assert spec.prepare["klquant_whole_infer"] == [], "kept with no steps: taken, as upstream takes it"
    assert "wget" not in (tmp_path / "specs/toy.yml").read_text(), "no `run: wget -nc :` step"
    tipc = _build(spec, tmp_path / "gen")
    for file in sorted(p.name for p in (root / "test_tipc/configs/toy").glob("*.txt")):
        config = (root / "test_tipc/configs/toy" / file).read_text()
        rel = f"test_tipc/configs/toy/{file}"
        for mode in modes:
            row = compare_prepare(script, tipc, config, rel, mode, "python")
            assert row.error is None and row.diff.verdict != "CHANGED", (file, mode, row.error, row.diff.first)
        lite = compare_prepare(script, tipc, config, rel, "lite_train_lite_infer", "python")
        assert lite.diff.verdict == "faithful" and "no-url-fetch" in lite.diff.deviations
        bench = plan_lines(tipc, config, rel, "benchmark_train")
        assert any("bench.tar" in line for line in bench) and any("requirements.txt" in line for line in bench)
    # a mode no typed config is prepared in stays refused, as before: migrate names it lost
    config = (root / "test_tipc/configs/toy/toy_cls_a_train_infer_python.txt").read_text()
    with pytest.raises(RuntimeError, match="unknown MODE 'cpp_infer'"):
        plan_lines(tipc, config, "test_tipc/configs/toy/toy_cls_a_train_infer_python.txt", "cpp_infer")


@pytest.mark.sandbox
def test_the_generated_prepare_goes_on_past_an_unset_url_as_upstreams_does(tmp_path):
    """A real run (not the plan listing) of the generated prepare.sh in a mode whose only fetch is
    of an unset URL: it ends 0 having fetched nothing, as upstream's ends past its failing wget."""
    prepare = PREPARE.replace("wget -nc -P ./dataset https://example.invalid/data/little_train.tar\n", "")
    prepare = prepare.replace("wget -nc ${pretrained}\n", "")
    root = _repo(tmp_path, prepare)
    assert _import(root, tmp_path / "specs").exit_code == 0
    spec = load_spec(str(tmp_path / "specs/toy.yml"))
    tipc = _build(spec, root)  # into the repo: it runs from its root
    config = "test_tipc/configs/toy/toy_cls_a_train_infer_python.txt"
    env = {**os.environ, "TIPC_CACHE": str(tmp_path / "cache"), "TIPC_OFFLINE": "1"}
    ran = subprocess.run(
        ["bash", str(tipc / "prepare.sh"), config, "lite_train_lite_infer"],
        cwd=root, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "wget" not in ran.stdout + ran.stderr and not (tmp_path / "cache").exists()


def test_a_spec_may_prepare_for_the_modes_in_use_and_a_misspelt_one_is_refused(tmp_path):
    good = (REPO / "specs" / "mobilenet_v3_small.yml").read_text()
    assert good.count("\nprepare:\n") == 1
    extra = "\nprepare:\n  benchmark_train: []\n  klquant_whole_infer: []\n"
    spec = load_spec_text(good.replace("\nprepare:\n", extra), "m.yml")
    assert {"benchmark_train", "klquant_whole_infer"} <= set(spec.prepare)
    with pytest.raises(SpecError) as err:
        load_spec_text(good.replace("\nprepare:\n", "\nprepare:\n  benchmark_trian: []\n"), "m.yml")
    message = str(err.value)
    assert "m.yml:12" in message and "benchmark_trian" in message and "benchmark_train" in message


# ---- the recorder: waits and time caps are commands


@pytest.mark.sandbox
def test_the_recorder_records_sleep_and_the_timeout_wrapper(tmp_path):
    from tipcgen.migrate.oracle import run_upstream

    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "test_train_inference_python.sh").write_text(
        "#!/bin/bash\nsleep 300\ntimeout -s KILL 5m python3.7 tools/train.py -o a=1\n"
        "timeout 1m timeout 2m python3.7 tools/eval.py\nsleep 0.5s\npython3.7 tools/export.py\n"
    )
    config = tmp_path / "toy" / "train_infer_python.txt"
    config.parent.mkdir()
    config.write_text(
        "===========================train_params===========================\nmodel_name:toy\npython:python3.7\n"
    )
    run = run_upstream(scripts, config, "lite_train_lite_infer", repo="toy")
    assert [c.argv for c in run.commands] == [
        ("sleep", "300"),  # a sleep that, slept, no bound below would pass
        ("timeout", "-s", "KILL", "5m", "python3.7", "tools/train.py", "-o", "a=1"),
        ("timeout", "1m", "timeout", "2m", "python3.7", "tools/eval.py"),
        ("sleep", "0.5s"),
        ("python3.7", "tools/export.py"),
    ]
    assert run.returncode == 0 and run.elapsed < bound(5), "recorded, not slept"


def _fork(tmp_path: Path, repo: str, old: str, new: str) -> Path:
    src = upstream_dir() / repo
    if not (src / "test_train_inference_python.sh").is_file():
        pytest.skip(f"{repo}: upstream scripts absent (../shared)")
    dest = tmp_path / repo
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("docs"))
    script = dest / "test_train_inference_python.sh"
    text = script.read_text()
    assert old in text
    script.write_text(text.replace(old, new))
    return dest


def _config(repo: str, rel: str) -> Path:
    path = corpus_dir() / repo / rel
    if not path.is_file():
        pytest.skip(f"{path}: corpus absent")
    return path


DET_TRAIN = 'eval "timeout 5m ${cmd} > ${train_log_path} 2>&1"'
# a fork that caps training only when benchmarking
DET_BENCH_ONLY = (
    'if [ ${MODE} = "benchmark_train" ]; then eval "timeout 5m ${cmd} > ${train_log_path} 2>&1"; '
    'else eval "${cmd} > ${train_log_path} 2>&1"; fi'
)


@pytest.mark.corpus
@pytest.mark.sandbox
def test_a_fork_capping_only_benchmark_training_differs_from_paddledetections_runner(tmp_path):
    from tipcgen.migrate.oracle import compare, run_upstream

    config = _config("PaddleDetection", "tood/tood_r50_fpn_1x_coco_train_infer_python.txt")
    fork = _fork(tmp_path, "PaddleDetection", DET_TRAIN, DET_BENCH_ONLY)
    original = upstream_dir() / "PaddleDetection"
    for mode in ("lite_train_lite_infer", "whole_train_whole_infer"):
        same = compare(config, "PaddleDetection", mode, run=run_upstream(original, config, mode))
        assert same.faithful, same.describe()
        trains = [c.argv for c in same.upstream.commands if "tools/train.py" in c.argv]
        assert trains and all(argv[:2] == ("timeout", "5m") for argv in trains), "upstream caps every training"
        forked = compare(config, "PaddleDetection", mode, run=run_upstream(fork, config, mode, repo="PaddleDetection"))
        assert not forked.faithful, forked.describe()
        first = forked.unexplained()[0]
        assert first.category == "train: interpreter" and "plan:     timeout 5m" in first.detail, first.detail
    bench = compare(config, "PaddleDetection", "benchmark_train", run=run_upstream(fork, config, "benchmark_train"))
    assert not any("interpreter" in d.category for d in bench.unexplained()), bench.describe()


@pytest.mark.corpus
@pytest.mark.sandbox
def test_paddleclas_sleeps_are_recorded_named_and_a_longer_one_is_a_difference(tmp_path):
    from tipcgen.migrate.oracle import compare, run_upstream

    config = _config("PaddleClas", "AlexNet/AlexNet_train_infer_python.txt")
    original = upstream_dir() / "PaddleClas"
    mode = "lite_train_lite_infer"
    diff = compare(config, "PaddleClas", mode, run=run_upstream(original, config, mode))
    sleeps = [d for d in diff.differences if d.category.startswith("sleep:")]
    assert [d.category for d in sleeps] == ["sleep: upstream sleeps 5"], diff.describe()
    assert len(sleeps[0].items) >= 3 and diff.faithful and "no-fixed-sleeps" in diff.explained_by()
    fork = _fork(tmp_path, "PaddleClas", "                sleep 5\n\n", "                sleep 60\n\n")
    forked = compare(config, "PaddleClas", mode, run=run_upstream(fork, config, mode, repo="PaddleClas"))
    assert [d.category for d in forked.unexplained()] == ["sleep: upstream sleeps 5 60"], forked.describe()


@pytest.mark.corpus
@pytest.mark.sandbox
@pytest.mark.parametrize(
    "folder, file, site",
    [
        ("ConvNeXt", "ConvNeXt_tiny_train_infer_python.txt", ("wget", "-nc", "null")),
        ("GeneralRecognition", "GeneralRecognition_PPLCNet_x2_5_train_no_eval.txt", ("wget", "-nc", ":")),
    ],
)
def test_paddleclas_real_prepare_on_configs_with_an_unset_url(tmp_path, folder, file, site):
    """PaddleClas's prepare.sh runs `eval "wget -nc ${model_url_value}"` in whole_infer with line 36's
    value: `null` (ConvNeXt) or `:` (a config without that line). The imported spec has no such
    step, the generated prepare.sh does the rest of what upstream does (faithful, by
    no-url-fetch), and it takes benchmark_train as upstream's does."""
    from tipcgen.importer import import_group
    from tipcgen.importer.prepare_import import add_prepare

    script = upstream_dir() / "PaddleClas" / "prepare.sh"
    source = _config("PaddleClas", f"{folder}/{file}")
    if not script.is_file():
        pytest.skip("PaddleClas's prepare.sh absent (../shared)")
    text = source.read_text()
    rel = f"test_tipc/configs/{folder}/{file}"
    traced = trace_prepare(script.parent, text, rel, "whole_infer", python="python3.7")
    assert site in [op.argv for op in traced.ops], "upstream runs the fetch of nothing"
    report = import_group(sorted(str(p) for p in source.parent.glob("*.txt")))
    report, found = add_prepare(report, script)
    assert "no-url-fetch" in found.deviations and not any("wget" in c for c in found.untyped)
    spec = load_spec_text(report.yaml, f"{report.model}.yml")
    tipc = _build(spec, tmp_path / "gen")
    row = compare_prepare(script, tipc, text, rel, "whole_infer", "python3.7")
    assert row.diff.verdict == "faithful" and "no-url-fetch" in row.diff.deviations, (row.error, row.diff.first)
    listing = plan_lines(tipc, text, rel, "whole_infer")
    assert not any("wget" in line for line in listing) and any("download" in line for line in listing)
    bench = compare_prepare(script, tipc, text, rel, "benchmark_train", "python3.7")
    assert bench.error is None and bench.diff.verdict != "CHANGED", bench.diff.first


@pytest.mark.sandbox
def test_in_a_chain_mode_a_config_of_another_script_is_refused_by_name(tmp_path):
    """prepare.sh CONFIG cpp_infer with a train (or serving) config: refused, naming the config's
    scripts (dialects.section_owners, the table the runners refuse by); a C++ config is prepared."""
    good = (REPO / "specs" / "mobilenet_v3_small.yml").read_text()
    spec = load_spec_text(good.replace("\nprepare:\n", "\nprepare:\n  cpp_infer: []\n"), "m.yml")
    tipc = _build(spec, tmp_path / "gen")
    train = next((tmp_path / "gen").rglob("*.txt"))
    text = train.read_text()
    rel = train.relative_to(tmp_path / "gen").as_posix()
    name_line = next(line for line in text.splitlines() if line.startswith("model_name:"))
    with pytest.raises(
        RuntimeError, match="a config of test_tipc/test_ptq_inference_python.sh or test_train_inference"
    ):
        plan_lines(tipc, text, rel, "cpp_infer")
    serving = f"===== serving_params =====\n{name_line}\npython:python3\n"
    with pytest.raises(RuntimeError, match="its first section is 'serving_params'.*not prepared in cpp_infer"):
        plan_lines(tipc, serving, rel, "cpp_infer")
    # the tutorial's own C++ config shape (models_cpp_binary): blank-separated, its name the second word
    cpp = f"# model load config\nmodel_name {name_line.split(':', 1)[1]}\nuse_gpu 0\n"
    prepared = plan_lines(tipc, cpp, rel, "cpp_infer")  # exits 0 (plan_lines raises otherwise)
    assert not [line for line in prepared if "first section" in line], prepared
    assert plan_lines(tipc, text, rel, "lite_train_lite_infer"), "its own modes: as before"
    # a dy2static config: its script runs it in lite_train_lite_infer only (spec/modes.serves)
    dy2static = f"===== base_train =====\n{name_line}\npython:python3\n"
    with pytest.raises(RuntimeError, match=r"dy2static_python.sh \(prepared in lite_train_lite_infer only\)"):
        plan_lines(tipc, dy2static, rel, "whole_infer")
    assert plan_lines(tipc, dy2static, rel, "lite_train_lite_infer")


# ---- a verbatim config's own modes (another chain's config, kept for the repo's script)

SERVING_PREPARE = (
    PREPARE.split("pretrained=")[0]
    + r"""if [ ${MODE} = "lite_train_lite_infer" ]; then
    wget -nc -P ./dataset https://example.invalid/data/little_train.tar
elif [ ${MODE} = "serving_infer" ]; then
    wget -nc -P ./deploy https://example.invalid/models/${model_name}_serving.tar
fi
"""
)
SERVING = "===========================serving_params===========================\nmodel_name:{name}\npython:python3.7\n"


@pytest.mark.sandbox
def test_a_verbatim_configs_own_mode_is_carried_and_prepared_as_upstream(tmp_path):
    root = _repo(tmp_path, SERVING_PREPARE)
    configs = root / "test_tipc/configs/toy"
    (configs / "toy_serving_python.txt").write_text(SERVING.format(name="toy_cls_KL"))
    result = _import(root, tmp_path / "specs")
    assert result.exit_code == 0, result.output
    text = (tmp_path / "specs/toy.yml").read_text()
    spec = load_spec(str(tmp_path / "specs/toy.yml"))
    raw = spec.other_configs["toy_serving_python.txt"]
    assert set(raw.prepare) == {"serving_infer"}, text
    assert "toy_cls_KL" in spec.model_names(), "prepare.sh dispatches on the verbatim config's own name"
    tipc = _build(spec, tmp_path / "gen")
    rel = "test_tipc/configs/toy/toy_serving_python.txt"
    row = compare_prepare(root / "test_tipc/prepare.sh", tipc, (configs / "toy_serving_python.txt").read_text(), rel,
                          "serving_infer", "python3.7")  # fmt: skip
    assert row.error is None and row.diff.verdict != "CHANGED", (row.error, row.diff.first)
    assert any("toy_cls_KL_serving.tar" in line for line in plan_lines(tipc, SERVING.format(name="toy_cls_KL"), rel,
                                                                          "serving_infer"))  # fmt: skip


def test_a_prepared_verbatim_config_must_name_a_plain_model(tmp_path):
    good = (REPO / "specs" / "mobilenet_v3_small.yml").read_text()
    raw = (
        "\nother_configs:\n  s.txt:\n    lines:\n    - '=====serving_params====='\n    - 'model_name:{name}'\n"
        "    prepare:\n      serving_infer: []\n"
    )
    assert load_spec_text(good + raw.format(name="ok_name"), "m.yml").other_configs["s.txt"].prepare
    for bad in ("a b", "x|y", "../up", "$(id)"):
        with pytest.raises(SpecError) as err:
            load_spec_text(good + raw.format(name=bad), "m.yml")
        assert "m.yml:" in str(err.value) and "other_configs" in str(err.value), str(err.value)


@pytest.mark.sandbox
def test_a_cpp_config_named_by_words_is_prepared_in_cpp_infer_as_paddleseg_does(tmp_path):
    """PaddleSeg's prepare.sh reads a C++ config's `model_name NAME` line by words in cpp_infer
    (func_parser_value_cpp): the dialect's prepare_word_modes. The config keeps that mode, the
    generated prepare.sh reads the name the same way there and fetches what upstream's does; a
    folder holding only a C++ config is of the repo's family (its prepare.sh reads so too)."""
    from tipcgen.importer import import_group
    from tipcgen.importer.prepare_import import add_prepare

    script = upstream_dir() / "PaddleSeg" / "prepare.sh"
    train = _config("PaddleSeg", "stdc_stdc1/train_infer_python.txt")
    cpp = _config("PaddleSeg", "stdc_stdc1/inference_cpp.txt")
    if not script.is_file():
        pytest.skip("PaddleSeg's prepare.sh absent (../shared)")
    folder = tmp_path / "stdc_stdc1"
    folder.mkdir()
    for src in (train, cpp):
        shutil.copy(src, folder / src.name)
    report, found = add_prepare(import_group(sorted(str(p) for p in folder.glob("*.txt"))), script)
    spec = load_spec_text(report.yaml, "stdc_stdc1.yml")
    # the C++ config is typed by PaddleSeg's own C++ table; its prepare mode stays the spec's
    cpp_suite = next(s for s in spec.suites.values() if s.file == "inference_cpp.txt")
    assert spec.layout == "paddleseg" and cpp_suite.layout == "paddleseg_cpp_binary" and "cpp_infer" in spec.prepare
    assert "stdc_stdc1" in spec.model_names()
    tipc = _build(spec, tmp_path / "gen")
    text, rel = cpp.read_text(), "test_tipc/configs/stdc_stdc1/inference_cpp.txt"
    row = compare_prepare(script, tipc, text, rel, "cpp_infer", "python")
    assert row.error is None and row.diff.verdict != "CHANGED", (row.error, row.diff.first)
    assert any("stdc1seg_infer_model.tar.gz" in line for line in plan_lines(tipc, text, rel, "cpp_infer"))
    # the C++ config alone: imported as the repo's family, not as the chain tables' default
    alone = tmp_path / "only_cpp"
    alone.mkdir()
    shutil.copy(cpp, alone / cpp.name)
    assert import_group([str(alone / cpp.name)], family="paddleseg").result.spec["layout"] == "paddleseg"


def test_a_cpp_configs_word_name_is_checked_as_the_generated_prepare_reads_it():
    spec = (
        "tipcgen: 1\nmodel: m\nlayout: {layout}\nother_configs:\n  c.txt:\n    lines:\n"
        "    - '# model load config'\n    - 'model_name {name}'\n    prepare:\n      cpp_infer: []\n"
    )
    seg = load_spec_text(spec.format(layout="paddleseg", name="ok_name"), "m.yml")
    assert seg.model_names() == ["ok_name"]
    # paddleocr's prepare.sh reads the name after a colon: this line gives none
    with pytest.raises(SpecError) as err:
        load_spec_text(spec.format(layout="paddleocr", name="ok_name"), "m.yml")
    assert "m.yml:" in str(err.value) and "c.txt" in str(err.value), str(err.value)
    for bad in ("$(id)", "../up", "x|y"):
        with pytest.raises(SpecError):
            load_spec_text(spec.format(layout="paddleseg", name=bad), "m.yml")


def test_a_mode_named_in_a_comment_of_a_script_is_no_mode_in_use(tmp_path):
    """The scan of the modes prepare.sh is in use for reads scripts by their code only: the
    generated common_func.sh's comment `(PaddleSeg's prepare.sh in cpp_infer)` once made the
    bundled example's migration `not ready` over a mode nothing runs."""
    from tipcgen.importer.prepare_import import repo_prepare_modes

    (tmp_path / "prepare.sh").write_text('MODE=$2\nif [ ${MODE} = "whole_infer" ]; then :; fi  # or "cpp_infer"\n')
    (tmp_path / "lib.sh").write_text(
        "# as prepare.sh in cpp_infer does\nbash test_tipc/prepare.sh $1 benchmark_train\n"
    )
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "x.md").write_text("`bash test_tipc/prepare.sh CONFIG serving_infer`\n")
    assert repo_prepare_modes(tmp_path / "prepare.sh") == {"whole_infer", "benchmark_train", "serving_infer"}
