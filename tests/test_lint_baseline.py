"""`tipcgen lint --write-baseline` / `--baseline`: a repo adopts lint gradually. On a copy of the
PaddleClas corpus the baseline makes lint pass; one new defect fails it, naming only that one."""

from __future__ import annotations

import json
import shutil

from typer.testing import CliRunner

from tipcgen.cli import app

runner = CliRunner()


def test_a_baseline_passes_the_accepted_findings_and_fails_on_one_new(tmp_path, corpus):
    repo = tmp_path / "PaddleClas"
    # a slice of PaddleClas's folders (the whole corpus is linted elsewhere; lint runs 5 times here)
    for folder in sorted(p.name for p in (corpus / "PaddleClas").iterdir() if p.is_dir())[:40]:
        shutil.copytree(corpus / "PaddleClas" / folder, repo / folder)
    baseline = tmp_path / "lint-baseline.json"
    before = runner.invoke(app, ["lint", str(repo)])
    assert before.exit_code == 1  # upstream's own defects (truncated configs, placeholder IPs)
    written = runner.invoke(app, ["lint", str(repo), "--write-baseline", str(baseline)])
    assert written.exit_code == 0 and "accepted" in written.output
    assert json.loads(baseline.read_text())["findings"]
    clean = runner.invoke(app, ["lint", str(repo), "--baseline", str(baseline)])
    assert clean.exit_code == 0, clean.output
    assert "0 new error(s)" in clean.output and "baselined finding(s) remain" in clean.output
    # one new misspelt boolean where PaddleClas's runner reads it (inference's use_gpu)
    config = repo / "AlexNet/AlexNet_train_infer_python.txt"
    text = config.read_text()
    assert "-o Global.use_gpu:True|False" in text
    config.write_text(text.replace("-o Global.use_gpu:True|False", "-o Global.use_gpu:True|Fasle"))
    new = runner.invoke(app, ["lint", str(repo), "--baseline", str(baseline)])
    assert new.exit_code == 1
    reported = [line for line in new.output.splitlines() if ": error: " in line or ": warning: " in line]
    assert len(reported) == 1 and "AlexNet_train_infer_python.txt" in reported[0] and "Fasle" in reported[0]
    assert "TIPC001" in reported[0] and "PaddleClas's runner" in reported[0]
    # the baseline moves with the repo: it is matched relative to its own folder
    moved = tmp_path / "elsewhere"
    shutil.copytree(tmp_path, moved, ignore=shutil.ignore_patterns("elsewhere"))
    config2 = moved / "PaddleClas/AlexNet/AlexNet_train_infer_python.txt"
    config2.write_text(text)
    again = runner.invoke(app, ["lint", str(moved / "PaddleClas"), "--baseline", str(moved / "lint-baseline.json")])
    assert again.exit_code == 0, again.output


def test_a_bad_baseline_is_a_clear_error(tmp_path, corpus):
    bad = tmp_path / "b.json"
    bad.write_text("{not json")
    result = runner.invoke(app, ["lint", str(corpus / "PaddleClas/AlexNet"), "--baseline", str(bad)])
    assert result.exit_code == 2 and "not a lint baseline" in result.output
