"""Import: import + build is byte-exact on the whole corpus; lint finds the corpus' real defects."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from typer.testing import CliRunner

from tipcgen.check.lint_paths import lint_config
from tipcgen.cli import app
from tipcgen.dialects import detect
from tipcgen.importer import import_group
from tipcgen.script.decode import decode

runner = CliRunner()

# Files that cannot be supported, with the reason (each is genuinely broken).
UNSUPPORTED = {
    "models/community/repo_template/your_model_name/train_infer_python.txt": "empty template file",
}


def _manifest(corpus: Path) -> list[str]:
    """Every config of the corpus (MANIFEST.tsv lists the fetched ones; PaddleOCR's seed configs
    sit beside them). Counts are derived from it, never pinned: the corpus grows."""
    return sorted(p.relative_to(corpus).as_posix() for p in corpus.rglob("*.txt"))


def _manifest_entries(corpus: Path) -> list[str]:
    rows = (corpus / "MANIFEST.tsv").read_text().splitlines()[1:]
    return [row.split("\t")[0] for row in rows if row.strip()]


# The layout each repo's train-type configs must land in.
_REPO_LAYOUT = {
    "PaddleClas": "paddleclas",
    "PaddleDetection": "paddledetection",
    "PaddleSeg": "paddleseg",
    "PaddleVideo": "paddlevideo",
    "models": "models",
    "PaddleOCR": "paddleocr",
}


@pytest.fixture(scope="module")
def reports(corpus):
    groups: dict = {}
    for rel in _manifest(corpus):
        groups.setdefault(os.path.dirname(rel), []).append(str(corpus / rel))
    return {d: import_group(sorted(ps)) for d, ps in sorted(groups.items())}


@pytest.mark.corpus
def test_every_corpus_config_round_trips_byte_for_byte(corpus, reports):
    files = _manifest(corpus)
    assert set(_manifest_entries(corpus)) <= set(files)
    not_exact = {
        os.path.relpath(os.path.join(r.directory, f), corpus): why
        for r in reports.values()
        for f, why in r.failures.items()
    }
    assert not_exact.keys() == UNSUPPORTED.keys(), not_exact
    # train-type configs land in their repo's layout, another chain's in a chain layout whose
    # table it has (PaddleClas's, which some other repos' dy2static and Lite configs share); the
    # rest is kept verbatim ("raw")
    from tipcgen.dialects.chains import CHAIN_LAYOUTS

    for r in reports.values():
        repo = os.path.relpath(r.directory, corpus).split(os.sep)[0]
        for file, layout in r.layouts.items():
            if repo in _REPO_LAYOUT:
                assert layout in (_REPO_LAYOUT[repo], "raw", *CHAIN_LAYOUTS), (r.directory, file, layout)
    layouts = Counter(k for r in reports.values() for k in r.layouts.values())
    assert all(layouts[name] > 0 for name in _REPO_LAYOUT.values()), layouts
    exact = sum(r.exact for r in reports.values())
    assert exact == len(files) - len(UNSUPPORTED)


def test_a_models_several_configs_become_one_spec_with_shared_defaults(corpus, reports):
    rep = reports["models/tutorials/mobilenetv3_prod/Step6/mobilenet_v3_small"]
    assert rep.exact == rep.files and not rep.failures
    doc = YAML(typ="safe").load(rep.yaml)
    # shared once, not copied into each suite
    assert doc["defaults"]["train"]["epochs"]["by_mode"] == {"lite_train_lite_infer": 5, "whole_train_whole_infer": 90}
    assert all("epochs" not in suite.get("train", {}) for suite in doc["suites"].values())
    # the chains' configs are typed by the tutorials' own tables (paddle2onnx: PaddleSeg's line
    # table under the tutorials' name; the Lite config: PaddleClas's line table under the tutorials'
    # name, never PaddleClas's own: a chain of one family never types another's config)
    chains = {s["file"]: s["layout"] for s in doc["suites"].values() if s.get("layout")}
    assert {"paddle2onnx_infer_python.txt", "train_ptq_infer_python.txt", "lite_arm_cpu_cpp.txt"} <= set(chains)
    assert all(layout.startswith("models_") for layout in chains.values()), chains
    assert chains["lite_arm_cpu_cpp.txt"] == "models_lite_arm"
    assert len(doc["suites"]) + len(doc.get("other_configs") or {}) == rep.files
    ocr = reports["PaddleOCR/ch_PP-OCRv3_rec"]
    assert ocr.exact == 3
    assert "fleet:" in ocr.yaml and "normal:" in ocr.yaml


def _lint_corpus(corpus):
    out = []
    for rel in _manifest(corpus):
        out += [(rel, f) for f in lint_config(str(corpus / rel))]
    return out


@pytest.fixture(scope="module")
def corpus_findings(corpus):
    return _lint_corpus(corpus)


@pytest.mark.corpus
def test_lint_finds_the_known_defects(corpus_findings):
    by_rule = Counter(f.rule for _, f in corpus_findings)
    fasle = [(rel, f) for rel, f in corpus_findings if f.rule == "TIPC001"]
    assert len(fasle) > 0
    assert all(rel.startswith("PaddleClas/") and "infer_quant" in f.message for rel, f in fasle)
    # PaddleClas's runner never reads infer_quant: a note, not an error (tests/test_lint_claims.py)
    assert {f.severity for _, f in fasle} == {"info"} and all("no effect" in f.message for _, f in fasle)
    shifted = sorted({rel for rel, f in corpus_findings if f.rule == "TIPC005"})
    assert shifted == [
        "PaddleSeg/contrib/PanopticSeg/mask2former/train_infer_python.txt",
        "PaddleSeg/contrib/PanopticSeg/panoptic_deeplab/train_infer_python.txt",
        "PaddleSeg/lpsnet/train_infer_python.txt",
        "PaddleSeg/segnext/train_infer_python.txt",
        "PaddleVideo/BMN/train_amp_infer_python.txt",
        "PaddleVideo/BMN/train_infer_python.txt",
    ]
    mismatch = {rel for rel, f in corpus_findings if f.rule == "TIPC008"}
    assert {
        "PaddleClas/ResNeXt/ResNeXt152_32x4d_train_infer_python.txt",
        "PaddleClas/ResNeXt/ResNeXt152_32x4d_train_amp_infer_python.txt",
    } <= mismatch
    assert len(mismatch) == 6
    assert {rel for rel, f in corpus_findings if f.rule == "TIPC007"} == {
        "models/tutorials/mobilenetv3_prod/Step6/mobilenet_v3_small/train_amp_infer_python.txt"
    }
    assert {rel for rel, f in corpus_findings if f.rule == "TIPC010"} >= {"PaddleSeg/lpsnet/train_infer_python.txt"}
    assert {rel for rel, f in corpus_findings if f.rule == "TIPC012"} == {
        "PaddleVideo/PP-TSN/train_linux_gpu_fleet_normal_infer_python_linux_gpu_cpu.txt.txt"
    }
    assert {rel for rel, f in corpus_findings if f.rule == "TIPC006"} >= {
        rel for rel, _ in corpus_findings if rel.endswith("_use_dali.txt")
    }
    # `-o Global.device:gpu` with gpu_list:0|0,1 is no defect for PaddleClas's runner (it passes the
    # flag on every run); PaddleSeg's runner takes one value per entry: two configs lose it
    short = sorted(rel for rel, f in corpus_findings if f.rule == "TIPC011")
    assert short == ["PaddleSeg/mscale_ocrnet/train_infer_python.txt", "PaddleSeg/segnext/train_infer_python.txt"]
    # The legacy doc mentions tables naming unknown modes; this corpus snapshot has none.
    assert by_rule["TIPC002"] == 0


def test_lint_is_silent_on_the_seed_fleet_config(corpus):
    path = corpus / "PaddleOCR/ch_PP-OCRv3_rec/train_linux_gpu_fleet_normal_infer_python_linux_gpu_cpu.txt"
    assert lint_config(str(path)) == []
    result = runner.invoke(app, ["lint", str(path)])
    assert result.exit_code == 0 and "0 error(s), 0 warning(s)" in result.output


def test_lint_rules_on_small_fixtures(tmp_path, corpus):
    seed = (
        corpus / "PaddleOCR/ch_PP-OCRv3_rec/train_linux_gpu_fleet_normal_infer_python_linux_gpu_cpu.txt"
    ).read_text()
    cases = {
        "TIPC002": seed.replace("lite_train_lite_infer=16", "lite_train_infer=16"),
        "TIPC003": seed.replace("|whole_train_whole_infer=64", ""),
        "TIPC004": seed.replace("lite_train_lite_infer=16|whole_train_whole_infer=64", "16"),
        "TIPC009": seed.replace("distill_export:null", "distill_export:null "),
        "TIPC010": seed.replace("trainer:norm_train", "trainer:norm"),
        "TIPC011": seed.replace("gpu_list:192.168.0.1,192.168.0.2;0,1", "gpu_list:0|0,1"),
        "TIPC013": seed.replace("null:null\n##\ntrainer", "null:null\n  \n##\ntrainer"),
        "TIPC014": seed.replace("\n", "\r\n"),
        "TIPC005": seed.replace("train_model_name:latest\n", "null:null\ntrain_model_name:latest\n"),
        "TIPC006": "\n".join(seed.splitlines()[:30]) + "\n",
    }
    for rule, text in cases.items():
        path = tmp_path / f"{rule}.txt"
        path.write_text(text, newline="")
        rules = {f.rule for f in lint_config(str(path), "paddleocr")}
        assert rule in rules, (rule, rules)
    result = runner.invoke(app, ["lint", str(tmp_path / "TIPC002.txt"), "--format", "json"])
    assert result.exit_code == 1 and '"rule": "TIPC002"' in result.output


def test_import_writes_specs_that_build_the_same_bytes(tmp_path, corpus):
    src = corpus / "models/tutorials/mobilenetv3_prod/Step6/mobilenet_v3_small"
    out = tmp_path / "specs"
    result = runner.invoke(app, ["import", str(src), "--out", str(out)])
    assert result.exit_code == 0, result.output
    spec = out / "mobilenet_v3_small.yml"
    assert spec.exists()
    result = runner.invoke(app, ["build", str(spec), "--out", str(tmp_path / "gen")])
    assert result.exit_code == 0, result.output
    for cfg in src.iterdir():
        built = tmp_path / "gen/mobilenet_v3_small/test_tipc/configs/mobilenet_v3_small" / cfg.name
        assert built.read_bytes() == cfg.read_bytes(), cfg.name


def test_layout_detection_and_asking_for_help(corpus, tmp_path):
    assert (
        detect(decode("x", (corpus / "PaddleSeg/lpsnet/train_infer_python.txt").read_bytes()).lines)[0] == "paddleseg"
    )
    weird = tmp_path / "weird.txt"
    weird.write_text(
        "===========================train_params===========================\n"
        + "a:b\n" * 5
        + "trainer:norm\n"
        + "c:d\n" * 40
    )
    result = runner.invoke(app, ["import", str(weird), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "pass --layout" in result.output
    result = runner.invoke(app, ["import", str(weird), "--layout", "paddleocr", "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output


HOSTILE = {
    "binary.txt": (b"\x00\x01\x02" * 100, "binary file"),
    "big.txt": (b"a:b\n" * (13 * 1024 * 1024), "MB"),
    "latin1.txt": (
        "===========================train_params===========================\nmodel_name:d\xe9mo\n".encode("latin-1"),
        "not UTF-8",
    ),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_files_give_clean_errors(tmp_path, name):
    data, words = HOSTILE[name]
    path = tmp_path / name
    path.write_bytes(data)
    result = runner.invoke(app, ["import", str(path), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), result.output
    assert words in result.output and "Traceback" not in result.output
    assert not (tmp_path / "o").exists()


def test_a_crlf_config_is_refused_with_the_fix(tmp_path, corpus):
    """CRLF line ends put a CR at the end of every value (it reaches every command, and printed it
    sends the cursor back over a status line): the runner refuses such a config, so import does."""
    seed = (
        corpus / "PaddleOCR/ch_PP-OCRv3_rec/train_linux_gpu_fleet_normal_infer_python_linux_gpu_cpu.txt"
    ).read_bytes()
    src = tmp_path / "src" / "m"
    src.mkdir(parents=True)
    (src / "train_infer_python.txt").write_bytes(seed.replace(b"\n", b"\r\n"))
    result = runner.invoke(app, ["import", str(src), "--out", str(tmp_path / "specs")])
    assert result.exit_code == 2 and "carriage return" in result.output and "LF line ends" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "specs").exists()


@pytest.mark.parametrize("variant", ["bom", "only_headers", "long"])
def test_hostile_files_that_import_correctly(tmp_path, corpus, variant):
    seed = (
        corpus / "PaddleOCR/ch_PP-OCRv3_rec/train_linux_gpu_fleet_normal_infer_python_linux_gpu_cpu.txt"
    ).read_bytes()
    data = {
        "bom": b"\xef\xbb\xbf" + seed,
        "only_headers": b"".join(line + b"\n" for line in seed.splitlines() if line.startswith(b"=")),
        "long": seed + b"".join(b"extra_%d:value\n" % i for i in range(10_000)),
    }[variant]
    src = tmp_path / "src" / "m"
    src.mkdir(parents=True)
    (src / "train_infer_python.txt").write_bytes(data)
    layout = ["--layout", "paddleocr"] if variant == "only_headers" else []
    result = runner.invoke(app, ["import", str(src), "--out", str(tmp_path / "specs"), *layout])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["build", str(tmp_path / "specs/m.yml"), "--out", str(tmp_path / "gen")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "gen/m/test_tipc/configs/m/train_infer_python.txt").read_bytes() == data


@pytest.mark.corpus
def test_lint_reports_each_files_findings_in_line_order(corpus):
    from tipcgen.check.lint_paths import lint_paths

    findings = lint_paths([str(corpus / "PaddleSeg")])
    assert len({f.file for f in findings}) > 5
    for file in {f.file for f in findings}:
        keys = [(f.line or 0, f.rule) for f in findings if f.file == file]
        assert keys == sorted(keys), file


def test_a_tree_import_skips_bad_configs_and_keeps_model_names_distinct(tmp_path, corpus):
    """`tipcgen import TREE`: a config that cannot round-trip is reported and skipped (exit 1)
    while the rest of its directory and the other directories are written; two directories with
    the same name in different places become specs with different `model:` names."""
    from typer.testing import CliRunner

    from tipcgen.cli import app

    src = corpus / "PaddleOCR" / "ch_PP-OCRv3_rec"
    tree = tmp_path / "tree"
    for repo in ("RepoA", "RepoB"):
        shutil.copytree(src, tree / repo / "ch_PP-OCRv3_rec")
    (tree / "RepoB" / "ch_PP-OCRv3_rec" / "empty_train_infer_python.txt").write_bytes(b"")
    result = CliRunner().invoke(app, ["import", str(tree), "--out", str(tmp_path / "specs")])
    assert result.exit_code == 1, result.output
    assert "empty_train_infer_python.txt: error: empty file" in result.output
    written = sorted(p.name for p in (tmp_path / "specs").glob("*.yml"))
    assert written == ["RepoA_ch_PP-OCRv3_rec.yml", "RepoB_ch_PP-OCRv3_rec.yml"], written
    models = {p.read_text().split("\nmodel: ", 1)[1].split("\n", 1)[0] for p in (tmp_path / "specs").glob("*.yml")}
    assert models == {"RepoA_ch_PP-OCRv3_rec", "RepoB_ch_PP-OCRv3_rec"}
    n_configs = len(list(src.glob("*.txt")))
    assert result.output.count(f"{n_configs} config(s) from") == 2
    build = CliRunner().invoke(app, ["build", str(tmp_path / "specs"), "--out", str(tmp_path / "gen")])
    assert build.exit_code == 0, build.output
