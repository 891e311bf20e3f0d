"""The whole-tree oracle (migrate/entrypoints.py) on small repos of our own: every entry point of the
old test_tipc/ found (scripts not only sourced, their modes from the script and the docs, the configs
they read), run before and after a switch under the recorder, every differing command named."""

from __future__ import annotations

from pathlib import Path

import pytest

from tipcgen.migrate.entrypoints import Covered, compare_entries, scripts_of, uses

pytestmark = [pytest.mark.sandbox]

LIB = """#!/bin/bash
func_parser_value() { local strs=$1; IFS=":"; array=(${strs}); echo ${array[1]}; }
"""
RUNNER = """#!/bin/bash
source test_tipc/common_func.sh
FILENAME=$1
MODE=$2
lines=()
while IFS= read -r l; do lines+=("$l"); done < "$FILENAME"
python=$(func_parser_value "${lines[1]}")
train=$(func_parser_value "${lines[2]}")
if [ "${MODE}" = "benchmark_train" ]; then
    timeout 5m ${python} ${train} --epochs=1
else
    ${python} ${train} --epochs=2
fi
sleep 5
${python} tools/export.py
"""
WRAPPER = """#!/bin/bash
source test_tipc/common_func.sh
FILENAME=$1
sed -i 's/"gpu"/"npu"/g' test_tipc/run.sh
nohup bash test_tipc/run.sh ${FILENAME} $2
"""
ALONE = """#!/bin/bash
FILENAME=$1
python3.7 tools/alone.py --config "$FILENAME"
"""
CONFIG = "model_name:tiny\npython:python3.7\ntrain:tools/train.py\n"
DOC = "Run `bash test_tipc/run.sh test_tipc/configs/tiny/train.txt lite_train_lite_infer`.\n"


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    tipc = root / "test_tipc"
    (tipc / "configs" / "tiny").mkdir(parents=True)
    (tipc / "docs").mkdir()
    for name, text in {"common_func.sh": LIB, "run.sh": RUNNER, "wrap.sh": WRAPPER, "alone.sh": ALONE}.items():
        (tipc / name).write_text(text)
    (tipc / "configs" / "tiny" / "train.txt").write_text(CONFIG)
    (tipc / "docs" / "run.md").write_text(DOC)
    return root


def _rows(root: Path, files: dict) -> dict:
    rows = compare_entries(str(root), files, Covered(), jobs=2, timeout=60)
    return {(r.entry.script.rsplit("/", 1)[-1], r.entry.mode): r for r in rows}


def _tree(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in (root / "test_tipc").rglob("*.sh")}


def test_entry_points_are_the_scripts_with_their_modes_from_script_and_docs(tmp_path):
    root = _repo(tmp_path)
    infos = {i.script.rsplit("/", 1)[-1]: i for i in scripts_of(root, _tree(root))}
    assert "common_func.sh" not in infos, "a script only sourced is a library, not an entry point"
    assert infos["run.sh"].modes == ("lite_train_lite_infer", "benchmark_train")
    assert infos["wrap.sh"].modes == infos["run.sh"].modes, "a wrapper passing $2 on takes its callee's modes"
    assert infos["alone.sh"].takes_config and not infos["alone.sh"].takes_mode
    assert uses(_tree(root), "test_tipc/wrap.sh", {"test_tipc/run.sh"})
    assert not uses(_tree(root), "test_tipc/alone.sh", {"test_tipc/common_func.sh"})


def test_an_unchanged_tree_is_identical_everywhere_and_wrappers_are_recorded(tmp_path):
    root = _repo(tmp_path)
    rows = _rows(root, {"test_tipc/common_func.sh": LIB.encode() + b"# same functions\n"})
    assert {k: r.verdict for k, r in rows.items()} == {
        ("run.sh", "lite_train_lite_infer"): "identical",
        ("run.sh", "benchmark_train"): "identical",
        ("wrap.sh", "lite_train_lite_infer"): "identical",
        ("wrap.sh", "benchmark_train"): "identical",
        ("alone.sh", None): "identical",
    }
    assert rows[("alone.sh", None)].detail == "uses no file the switch changes: not run"
    # the wrappers and sleep's argument are commands of their own (wrap.sh runs run.sh under nohup)
    assert rows[("run.sh", "benchmark_train")].before_commands == 4  # timeout 5m, python, sleep 5, export
    assert rows[("wrap.sh", "benchmark_train")].before_commands == 5  # + nohup


def test_a_changed_library_names_every_differing_command_of_every_script_using_it(tmp_path):
    root = _repo(tmp_path)
    broken = LIB.replace("func_parser_value()", "tipc_value()")  # the function kept scripts call is gone
    rows = _rows(root, {"test_tipc/common_func.sh": broken.encode()})
    row = rows[("run.sh", "lite_train_lite_infer")]
    assert row.verdict == "CHANGED"
    # the commands the missing function fed are gone, the exit status says why
    assert row.differences == [
        "- before: python3.7 tools/train.py --epochs=2",
        "- before: python3.7 tools/export.py",
        "exit status: before 0, after 127",
    ]
    assert rows[("wrap.sh", "lite_train_lite_infer")].verdict == "CHANGED"
    assert rows[("alone.sh", None)].verdict == "identical"


def test_a_timeout_only_in_one_mode_is_a_difference_of_that_mode_only(tmp_path):
    root = _repo(tmp_path)
    everywhere = RUNNER.replace("    ${python} ${train} --epochs=2", "    timeout 5m ${python} ${train} --epochs=2")
    rows = _rows(root, {"test_tipc/run.sh": everywhere.encode()})
    assert rows[("run.sh", "benchmark_train")].verdict == "identical"
    lite = rows[("run.sh", "lite_train_lite_infer")]
    assert lite.verdict == "CHANGED"
    assert lite.differences == ["+ after:  timeout 5m"], lite.differences


def test_a_generated_script_is_faithful_only_where_the_runner_oracle_found_it_so(tmp_path):
    root = _repo(tmp_path)
    edited = RUNNER.replace("sleep 5\n", "")
    files = {"test_tipc/run.sh": edited.encode()}
    covered = Covered(
        {("run.sh", "test_tipc/configs/tiny/train.txt", "lite_train_lite_infer"): ("faithful", "no-sleep")}
    )
    rows = {
        (r.entry.script.rsplit("/", 1)[-1], r.entry.mode): r for r in compare_entries(str(root), files, covered, 2, 60)
    }
    assert (rows[("run.sh", "lite_train_lite_infer")].verdict, rows[("run.sh", "lite_train_lite_infer")].detail) == (
        "faithful", "no-sleep",
    )  # fmt: skip
    assert rows[("run.sh", "benchmark_train")].verdict == "CHANGED", "no verdict found for that mode: not explained"
    assert rows[("run.sh", "benchmark_train")].differences == ["- before: sleep 5"]
    # the wrapper running it: its differences are exactly the runner's, in the mode the runner is faithful in
    assert rows[("wrap.sh", "lite_train_lite_infer")].verdict == "faithful"
    assert rows[("wrap.sh", "benchmark_train")].verdict == "CHANGED"


def test_a_generated_script_refusing_a_config_typed_for_another_script_is_the_named_deviation(tmp_path):
    root = _repo(tmp_path)
    refusing = "#!/bin/bash\necho 'alone.sh: not a config of this chain' >&2\nexit 2\n"
    files = {"test_tipc/alone.sh": refusing.encode()}
    config = "test_tipc/configs/tiny/train.txt"
    # the switch compared the config as run.sh's: alone.sh refusing it is the named deviation
    covered = Covered({("run.sh", config, "lite_train_lite_infer"): ("identical", "")})
    row = compare_entries(str(root), files, covered, 2, 60)
    alone = next(r for r in row if r.entry.script.endswith("alone.sh"))
    assert (alone.verdict, alone.detail) == ("faithful", "refuses-foreign-config")
    # a config compared as no script's: the refusal is a change, every lost command named
    lost = next(r for r in compare_entries(str(root), files, Covered(), 2, 60) if r.entry.script.endswith("alone.sh"))
    assert lost.verdict == "CHANGED"
    assert lost.differences == [
        f"- before: python3.7 tools/alone.py --config {config}",
        "exit status: before 0, after 2",
    ]


def test_a_mode_the_old_script_served_for_a_compared_config_is_never_foreign(tmp_path):
    root = _repo(tmp_path)
    config = "test_tipc/configs/tiny/train.txt"
    refusing = RUNNER.replace(
        'if [ "${MODE}" = "benchmark_train" ]; then', 'if [ "${MODE}" = "benchmark_train" ]; then\n    exit 2'
    )
    covered = Covered({("run.sh", config, "lite_train_lite_infer"): ("identical", "")})
    rows = {r.entry.mode: r for r in compare_entries(str(root), {"test_tipc/run.sh": refusing.encode()}, covered, 2, 60)
            if r.entry.script.endswith("/run.sh")}  # fmt: skip
    assert rows["lite_train_lite_infer"].verdict == "identical"
    assert rows["benchmark_train"].verdict == "CHANGED", "a train mode lost for a train config is a change"


def test_the_report_collapses_the_same_differences_and_lists_every_entry_literally():
    from tipcgen.migrate.entries import EntryPoint, EntryRow
    from tipcgen.migrate.entries_report import entries_markdown

    def row(config: str, mode: str, verdict: str = "CHANGED") -> EntryRow:
        diffs = [f"- before: python3.7 train.py --out=./output/{mode}/x", "+ after:  timeout 5m"]
        return EntryRow(EntryPoint("test_tipc/run.sh", config, mode), verdict, "2 differing command line(s)",
                        diffs if verdict == "CHANGED" else [], 2, 3, 0, 0)  # fmt: skip

    hostile = "test_tipc/configs/a|b`<img src=x onerror=alert(1)>`/train.txt"
    rows = [row("test_tipc/configs/a/train.txt", "lite_train_lite_infer"), row(hostile, "whole_infer"),
            row("test_tipc/configs/c/train.txt", "whole_infer", "identical")]  # fmt: skip
    text = "\n".join(entries_markdown(rows))
    assert "| `test_tipc/run.sh` | 1 | 0 | 2 | 0 | 0 |" in text
    assert "2 entry point(s) would change, in 1 group(s)" in text  # mode and folder folded: one edit
    assert "`test_tipc/run.sh`, 2 run(s)" in text
    table = text.split("### Every entry point", 1)[1].splitlines()
    assert sum(line.startswith("| `test_tipc/run.sh` |") for line in table) == 3  # every entry, no limit
    assert "<img" not in text.replace("`<img", "")  # only ever inside a code span
    assert all(line.count(" | ") == 5 for line in table if line.startswith("| `")), "no cell split by a `|`"


def test_a_script_that_ran_nothing_on_any_config_is_still_in_the_report(tmp_path):
    root = _repo(tmp_path)
    idle = '#!/bin/bash\nsource test_tipc/common_func.sh\nFILENAME=$1\necho nothing to do for "$FILENAME"\n'
    (root / "test_tipc" / "idle.sh").write_text(idle)
    files = {"test_tipc/common_func.sh": LIB.encode() + b"# same functions\n"}
    rows = [r for r in compare_entries(str(root), files, Covered(), 2, 60) if r.entry.script.endswith("idle.sh")]
    assert [(r.verdict, r.detail) for r in rows] == [("not run before", "neither tree runs anything here")]


def test_a_config_kept_verbatim_for_a_kept_script_is_foreign_to_every_generated_one(tmp_path):
    root = _repo(tmp_path)
    refusing = "#!/bin/bash\necho 'run.sh: not a train config' >&2\nexit 2\n"
    covered = Covered()
    covered.keep("test_tipc/configs/tiny/train.txt", "kept verbatim: the repo's own alone.sh still runs it")
    rows = compare_entries(str(root), {"test_tipc/run.sh": refusing.encode()}, covered, 2, 60)
    runner = {r.entry.mode: (r.verdict, r.detail) for r in rows if r.entry.script.endswith("/run.sh")}
    assert runner == {m: ("faithful", "refuses-foreign-config") for m in ("lite_train_lite_infer", "benchmark_train")}


def test_a_dropped_fixed_sleep_is_faithful_only_by_the_runner_that_names_it():
    from tipcgen.migrate.entrypoints import explained_by
    from tipcgen.plan.benchmark_train import DEVIATIONS as BENCH
    from tipcgen.plan.runners.paddleclas import DEVIATIONS as CLAS
    from tipcgen.plan.runners.paddleseg import DEVIATIONS as SEG

    dropped = ["- before: CUDA_VISIBLE_DEVICES=0 sleep 5", "- before: sleep 5"]
    assert explained_by(dropped, CLAS) == ["no-fixed-sleeps"]
    assert explained_by(dropped, SEG) == [], "PaddleSeg's runner names no such deviation"
    assert explained_by(["- before: sleep 30"], CLAS) == [], "a wait of another length is a difference"
    assert explained_by([*dropped, "+ after:  python3 tools/train.py"], CLAS) == [], "every line, or none"
    assert explained_by([*dropped, "exit status: before 0, after 1"], CLAS) == []
    analysis = "- before: python /scripts/analysis.py --filename ./train_log/x --speed_log_file ./index/x"
    assert explained_by([analysis, *dropped], (*BENCH, *CLAS)) == ["analysis-needs-benchmark-root", "no-fixed-sleeps"]
    assert explained_by([analysis], CLAS) == []


def test_a_command_upstreams_eval_cut_at_a_semicolon_is_the_runners_no_eval_deviation():
    """A value holding `;` (a profiler option read into num_workers): upstream's eval ran the command
    up to it; ours passes the whole value. Faithful by `no-eval` only for that pair of lines."""
    from tipcgen.migrate.entrypoints import explained_by
    from tipcgen.plan.runners.paddleclas import DEVIATIONS as CLAS
    from tipcgen.plan.runners.paddleseg import DEVIATIONS as SEG

    after = "+ after:  python3 tools/train.py -o workers=batch_range=[10,20];state=GPU -o Global.epochs=1"
    cut = "- before: python3 tools/train.py -o workers=batch_range=[10,20]"
    assert explained_by([after, cut], CLAS) == ["no-eval"]
    assert explained_by([cut, "- before: sleep 5", after], CLAS) == ["no-eval", "no-fixed-sleeps"]
    assert explained_by([after, cut], SEG) == ["no-eval"], "every runner names it"
    # what followed the `;` ran a program upstream: that line is left unexplained
    assert explained_by([after, cut, "- before: rm -rf output"], CLAS) == []
    # not the same command up to the `;`: not a cut
    assert explained_by([after, cut.replace("train.py", "eval.py")], CLAS) == []
    assert explained_by([after], CLAS) == [], "a line without its pair"


def test_a_server_started_under_nohup_in_its_directory_is_the_serving_deviation():
    from tipcgen.migrate.entrypoints import explained_by
    from tipcgen.plan.runners.paddleclas import DEVIATIONS as CLAS
    from tipcgen.plan.runners.paddleclas_serving_python import DEVIATIONS as SERVING

    lines = [
        "- before: (in deploy/paddleserving/) CUDA_VISIBLE_DEVICES=0 nohup",
        "- before: (in deploy/paddleserving/) CUDA_VISIBLE_DEVICES=0 sleep 5s",
    ]
    assert explained_by(lines, SERVING) == ["serving-server-always-stopped"]
    assert explained_by(lines[:1], CLAS) == [], "the train runner drops no nohup"
    assert explained_by(["- before: nohup python3 x.py"], SERVING) == [], (
        "a wrapper with its command is no wrapper alone"
    )


def test_dinos_op_build_and_a_background_run_moved_are_named_by_their_scripts_deviations():
    from tipcgen.dialects.chains.paddledetection_pipeline import PADDLEDETECTION_PIPELINE
    from tipcgen.migrate.entrypoints import explained_by
    from tipcgen.plan.planner import runner_for
    from tipcgen.plan.runners.paddleclas import DEVIATIONS as CLAS
    from tipcgen.plan.runners.paddledetection import DEVIATIONS as DET

    build = [
        "- before: (in ppdet/modeling/transformers/ext_op/) CUDA_VISIBLE_DEVICES=0 python3.7 "
        "setup_ms_deformable_attn_op.py install",
        "- before: (in ppdet/modeling/transformers/ext_op/) pip list",
    ]
    assert explained_by(build, DET) == ["no-dino-op-build"]
    assert explained_by(build, CLAS) == []
    assert explained_by(["- before: pip list"], DET) == [], "a `pip list` outside the op's folder"
    assert explained_by(["- before: python3.7 setup_other_op.py install"], DET) == []
    pipeline = runner_for(PADDLEDETECTION_PIPELINE).DEVIATIONS
    run = "python3.7 deploy/pipeline/pipeline.py --config=c.yml --device=cpu -o MOT.enable=True"
    moved = [f"+ after:  {run}", f"- before: {run}"]
    assert explained_by(moved, pipeline) == ["pipeline-foreground"]
    assert explained_by(moved, DET) == [], "the train runner runs nothing in the background"
    assert explained_by([f"+ after:  {run}", f"- before: {run} --x"], pipeline) == [], "not the same command"


def test_a_refused_mode_is_faithful_only_by_a_deviation_of_the_script_naming_that_mode(tmp_path):
    from tipcgen.dialects.steps import Deviation

    root = _repo(tmp_path)
    config = "test_tipc/configs/tiny/train.txt"
    refusing = RUNNER.replace(
        'if [ "${MODE}" = "benchmark_train" ]; then', 'if [ "${MODE}" = "benchmark_train" ]; then\n    exit 2'
    )
    only = Deviation(
        "lite-only", "MODE must be lite_train_lite_infer", "x", (r"^mode refused: (?!lite_train_lite_infer$)",)
    )
    covered = Covered({("run.sh", config, "lite_train_lite_infer"): ("identical", "")}, {"run.sh": (only,)})
    rows = {r.entry.mode: r for r in compare_entries(str(root), {"test_tipc/run.sh": refusing.encode()}, covered, 2, 60)
            if r.entry.script.endswith("/run.sh")}  # fmt: skip
    assert (rows["benchmark_train"].verdict, rows["benchmark_train"].detail) == ("faithful", "lite-only")
    assert rows["benchmark_train"].differences == [
        "- before: timeout 5m",
        "- before: python3.7 tools/train.py --epochs=1",
        "- before: sleep 5",
        "- before: python3.7 tools/export.py",
        "exit status: before 0, after 2",
    ]
    # a deviation of another mode does not name it
    other = Deviation("whole-only", "MODE must be whole_infer", "x", (r"^mode refused: (?!benchmark_train$)",))
    covered = Covered({("run.sh", config, "lite_train_lite_infer"): ("identical", "")}, {"run.sh": (other,)})
    rows = {r.entry.mode: r for r in compare_entries(str(root), {"test_tipc/run.sh": refusing.encode()}, covered, 2, 60)
            if r.entry.script.endswith("/run.sh")}  # fmt: skip
    assert rows["benchmark_train"].verdict == "CHANGED"


def test_a_script_run_without_a_mode_takes_the_verdict_its_config_was_compared_with():
    from tipcgen.migrate.entrypoints import Covered

    covered = Covered({("test_lite_arm_cpu_cpp.sh", "c.txt", "lite_infer"): ("faithful", "lite-config-edits")})
    assert covered.get("test_tipc/test_lite_arm_cpu_cpp.sh", "c.txt", None) == ("faithful", "lite-config-edits")
    assert covered.get("test_tipc/test_lite_arm_cpu_cpp.sh", "c.txt", "other_mode") is None, "a MODE given is exact"
    assert covered.get("test_tipc/test_lite_arm_cpu_cpp.sh", "d.txt", None) is None
    covered.verdicts[("test_lite_arm_cpu_cpp.sh", "c.txt", "lite_gpu")] = ("CHANGED", "x")
    assert covered.get("test_tipc/test_lite_arm_cpu_cpp.sh", "c.txt", None) is None, "two verdicts: none chosen"


# ---- modes from code only; a refused mode that nothing of the repo runs in

HOSTILE_COMMENTS = """#!/bin/bash
# MODE be one of ['lite_train_lite_infer'] ; [ ${MODE} = "from_a_comment" ]
FILENAME=$1
MODE=$2
n=${#FILENAME}; [ ${MODE} = "after_length" ]  # ${#x} starts no comment: [ ${MODE} = "comment1" ]
if [ $# -lt 2 ]; then echo "usage # x"; [ ${MODE} = "after_quoted_hash" ]; fi  # [ ${MODE} = "comment2" ]
echo 'a # b' x#y; [ ${MODE} = "after_single_quoted" ]
if [ "${MODE}" = "real_mode" ]; then  # [ ${MODE} = "trailing_comment" ]
    python3.7 tools/train.py
fi  # end if [ ${MODE} = "infer" ]; then
"""


def test_modes_come_from_code_never_from_comments(tmp_path):
    root = tmp_path / "repo"
    (root / "test_tipc").mkdir(parents=True)
    tree = {"test_tipc/x.sh": HOSTILE_COMMENTS.encode()}
    (info,) = scripts_of(root, tree)
    assert info.modes == ("after_length", "after_quoted_hash", "after_single_quoted", "real_mode")


def test_code_only_strips_comments_but_not_hashes_in_quotes_or_expansions():
    from tipcgen.script.code import code_only

    cases = {
        'fi  # end if [ ${MODE} = "infer" ]; then\nx=1': "fi  \nx=1",
        'echo "a # b" # c\n': 'echo "a # b" \n',
        "echo 'a # b' # c\n": "echo 'a # b' \n",
        "n=${#ips} # length\n": "n=${#ips} \n",
        "if [ $# -lt 2 ]; then # usage\n": "if [ $# -lt 2 ]; then \n",
        "x=a#b;#c\n": "x=a#b;\n",
        'y="${x:-"#"}" #c\n': 'y="${x:-"#"}" \n',
        "z=${x#*/} ${y##*#} # strip\n": "z=${x#*/} ${y##*#} \n",
        "awk '{print $1} # in a program\n more'\n# real\n": "awk '{print $1} # in a program\n more'\n\n",
        'echo \\# "it\'s" # c\n': 'echo \\# "it\'s" \n',
        "#!/bin/bash\n": "\n",
        # a here-document is data: an apostrophe in it opens no quote, a `#` in it is kept
        "cat <<EOF >f\ndon't # keep\nEOF\nx=1 # c\n": "cat <<EOF >f\ndon't # keep\nEOF\nx=1 \n",
        "cat <<-'X'\n\tit's\n\tX\n# c\n": "cat <<-'X'\n\tit's\n\tX\n\n",
        "x=$((1<<y)) # c\ny=1 # d\n": "x=$((1<<y)) \ny=1 \n",  # a shift, not a here-document
    }
    for text, code in cases.items():
        assert code_only(text) == code, text


REFUSING = """#!/bin/bash
FILENAME=$1
MODE=$2
case $MODE in
lite_train_lite_infer | whole_infer) ;;
*) echo "tipc: unknown MODE '$MODE' (lite_train_lite_infer, whole_infer)" >&2; exit 2 ;;
esac
python3.7 tools/train.py
"""
# The old runner: klquant_infer is tested inside the whole_infer branch only, so that mode runs
# the training branch under its name.
OLD_RUNNER = """#!/bin/bash
FILENAME=$1
MODE=$2
if [ ${MODE} = "whole_infer" ]; then
    if [ ${MODE} = "klquant_infer" ]; then is_quant=True; fi
    python3.7 tools/infer.py
else
    python3.7 "$(sed -n 3p "$FILENAME" | cut -d: -f2)"
fi
"""


def _untested_repo(tmp_path: Path, prepare: str, doc: str = "") -> Path:
    root = tmp_path / "repo"
    (root / "test_tipc" / "configs" / "m").mkdir(parents=True)
    (root / "test_tipc" / "run.sh").write_text(OLD_RUNNER)
    (root / "test_tipc" / "prepare.sh").write_text(prepare)
    (root / "test_tipc" / "configs" / "m" / "train.txt").write_text(CONFIG)
    if doc:
        (root / "docs").mkdir()
        (root / "docs" / "tipc.md").write_text(doc)
    return root


def _untested_rows(root: Path, script: str = "run.sh") -> dict:
    rows = compare_entries(str(root), {"test_tipc/run.sh": REFUSING.encode()}, Covered(), 2, 60)
    return {r.entry.mode: r for r in rows if r.entry.script.endswith("/" + script)}


# A device wrapper like PaddleSeg's _xpu.sh: edits the config, passes its mode on.
XPU = """#!/bin/bash
FILENAME=$1
sed -i "s/train.py/train_xpu.py/g" $FILENAME
cmd="bash test_tipc/run.sh ${FILENAME} $2"
eval $cmd
"""


def test_a_wrapper_passing_an_untested_mode_to_the_refusing_script_is_faithful_too(tmp_path):
    root = _untested_repo(tmp_path, PREPARE)
    (root / "test_tipc" / "xpu.sh").write_text(XPU)
    row = _untested_rows(root, "xpu.sh")["klquant_infer"]
    # its own edit of the config: not the runner's differences, the refusal passed through
    assert row.differences == ["- before: python3.7 tools/train_xpu.py", "exit status: before 0, after 2"]
    assert (row.verdict, row.detail) == ("faithful", "the differences of run.sh it runs (refuses-untested-mode)")
    # the wrapper in a mode the repo prepares: the change stays a change
    prepared = PREPARE.replace('"whole_infer" ]', '"whole_infer" ] || [ ${MODE} = "klquant_infer" ]')
    other = _untested_repo(tmp_path / "prepared", prepared)
    (other / "test_tipc" / "xpu.sh").write_text(XPU)
    assert _untested_rows(other, "xpu.sh")["klquant_infer"].verdict == "CHANGED"


PREPARE = (
    '#!/bin/bash\nMODE=$2\nif [ ${MODE} = "whole_infer" ]; then\n    wget -nc https://x/m.tar # klquant_infer too\nfi\n'
)


def test_a_refused_mode_nothing_of_the_repo_runs_in_is_the_named_deviation(tmp_path):
    rows = _untested_rows(_untested_repo(tmp_path, PREPARE))
    row = rows["klquant_infer"]
    assert (row.verdict, row.detail) == ("faithful", "refuses-untested-mode")
    assert row.differences == ["- before: python3.7 tools/train.py", "exit status: before 0, after 2"]
    assert rows["whole_infer"].verdict == "CHANGED", "a mode the runner takes and runs differently is a change"


@pytest.mark.parametrize(
    ("prepare", "doc"),
    [
        (PREPARE.replace('"whole_infer" ]', '"whole_infer" ] || [ ${MODE} = "klquant_infer" ]'), ""),
        (PREPARE.replace('if [ ${MODE} = "whole_infer" ]', 'if [[ ${MODE} =~ "klquant" ]]'), ""),
        (PREPARE, "Run `bash test_tipc/run.sh test_tipc/configs/m/train.txt klquant_infer`.\n"),
        (PREPARE, "Run `bash test_tipc/prepare.sh test_tipc/configs/m/train.txt 'klquant_infer'`.\n"),
    ],
    ids=["prepare-tests-it", "prepare-matches-it", "doc-runs-the-script", "doc-prepares-it"],
)
def test_a_refused_mode_the_repo_prepares_or_documents_stays_a_change(tmp_path, prepare, doc):
    rows = _untested_rows(_untested_repo(tmp_path, prepare, doc))
    row = rows["klquant_infer"]
    assert (row.verdict, row.detail) == ("CHANGED", "the new tree runs nothing here")


def test_a_doc_block_commented_out_documents_no_mode(tmp_path):
    doc = "<!-- old:\n```\nbash test_tipc/run.sh test_tipc/configs/m/train.txt klquant_infer\n```\n-->\n"
    rows = _untested_rows(_untested_repo(tmp_path, PREPARE, doc))
    assert rows["klquant_infer"].detail == "refuses-untested-mode"


def test_a_mode_is_untested_only_where_its_test_cannot_be_true():
    from tipcgen.migrate.entrypoints import dead_modes
    from tipcgen.script.code import code_only

    def dead(body: str) -> set:
        return dead_modes(code_only(body))

    inner = '    if [ ${MODE} = "klquant_infer" ]; then q=True; fi\n'
    assert dead(f'if [ ${{MODE}} = "whole_infer" ] || [ "${{MODE}}" == "x_infer" ]; then\n{inner}fi\n') == {
        "klquant_infer"
    }
    assert dead(f'if [[ ${{MODE}} = "whole_infer" ]]; then\n  for m in a b; do\n  {inner}  done\nfi\n') == {
        "klquant_infer"
    }
    live = {
        "an else branch": f'if [ ${{MODE}} = "whole_infer" ]; then\n  :\nelse\n{inner}fi\n',
        "an elif": f'if [ ${{MODE}} = "a_b" ]; then\n  :\nelif [ ${{MODE}} = "c_d" ]; then\n{inner}fi\n',
        "a condition of other tests": f'if [ ${{MODE}} = "whole_infer" ] || [ $x = y ]; then\n{inner}fi\n',
        "the mode itself in the condition": f'if [ ${{MODE}} = "klquant_infer" ] || [ ${{MODE}} = "w_i" ]; then\n{inner}fi\n',
        "a != condition": f'if [ ${{MODE}} != "whole_infer" ]; then\n{inner}fi\n',
        "a =~ condition": f'if [[ ${{MODE}} =~ "whole" ]]; then\n{inner}fi\n',
        "a top-level test": inner.strip() + "\n",
        "a function body": f"f() {{\n{inner}}}\n",
        "tested live elsewhere too": f'if [ ${{MODE}} = "whole_infer" ]; then\n{inner}fi\n{inner.strip()}\n',
    }
    for why, body in live.items():
        assert "klquant_infer" not in dead(body), why


def test_without_a_prepare_sh_nothing_is_untested(tmp_path):
    root = _untested_repo(tmp_path, PREPARE)
    (root / "test_tipc" / "prepare.sh").unlink()
    assert _untested_rows(root)["klquant_infer"].verdict == "CHANGED"


# A kept script like PaddleSeg's dy2static one: it runs the train runner on a copy of its config.
DY2STATIC = """#!/bin/bash
FILENAME=$1
mkdir -p test_tipc/output
cp "$FILENAME" test_tipc/output/block.txt
bash test_tipc/test_train_inference_python.sh test_tipc/output/block.txt lite_train_lite_infer
python3.7 tools/compare_loss.py
"""
OLD_TRAIN = """#!/bin/bash
python3.7 "$(sed -n 3p "$1" | cut -d: -f2)" --mode="$2"
"""
NEW_TRAIN = """#!/bin/bash
case $(head -n 1 "$1") in
*serving_params*) echo "refusing it" >&2; exit 2 ;;
esac
python3.7 "$(sed -n 3p "$1" | cut -d: -f2)" --mode="$2"
"""


@pytest.mark.parametrize(
    ("first", "new", "verdict"),
    [
        ("===== serving_params =====", NEW_TRAIN, "faithful"),  # the runner refuses another script's config
        ("===== base_train =====", NEW_TRAIN.replace("serving_params", "base_train"), "CHANGED"),  # its own
        ("===== serving_params =====", OLD_TRAIN.replace('--mode="$2"', ""), "CHANGED"),  # an edit, no refusal
    ],
)
def test_a_kept_script_handing_a_foreign_config_to_the_refusing_runner_is_the_named_deviation(
    tmp_path, first, new, verdict
):
    root = tmp_path / "repo"
    tipc = root / "test_tipc"
    (tipc / "configs" / "m").mkdir(parents=True)
    (tipc / "test_train_dy2static_python.sh").write_text(DY2STATIC)
    (tipc / "test_train_inference_python.sh").write_text(OLD_TRAIN)
    (tipc / "configs" / "m" / "c.txt").write_text(f"{first}\nmodel_name:m\ntrain:tools/train.py\n")
    files = {"test_tipc/test_train_inference_python.sh": new.encode()}
    rows = compare_entries(str(root), files, Covered(), 2, 60)
    row = next(r for r in rows if r.entry.script.endswith("dy2static_python.sh"))
    assert row.verdict == verdict, (row.detail, row.differences)
    if verdict == "faithful":
        assert row.detail.startswith("refuses-foreign-config (by test_train_inference_python.sh")
        assert row.differences == ["- before: python3.7 tools/train.py --mode=lite_train_lite_infer"]


def test_a_config_read_only_in_its_own_scripts_mode_is_probed_there(tmp_path):
    """prepare.sh stops early on a C++ config in a train mode (PaddleSeg's under `nounset`) and
    prepares it in cpp_infer: the config is probed in the modes that serve its own script too, so
    its cpp_infer entry is run, never missing from the report."""
    root = tmp_path / "repo"
    tipc = root / "test_tipc"
    (tipc / "configs" / "m").mkdir(parents=True)
    prepare = (
        '#!/bin/bash\nMODE=$2\nif [ "$MODE" = "lite_train_lite_infer" ]; then\n'
        '    if [[ $(head -n 1 "$1") == "#"* ]]; then exit 1; fi\n    pip install x\nfi\n'
        'if [ "$MODE" = "cpp_infer" ]; then wget https://x/"$(sed -n 2p "$1" | cut -d" " -f2)".tgz; fi\n'
    )
    (tipc / "prepare.sh").write_text(prepare)
    (tipc / "configs" / "m" / "cpp.txt").write_text("# model load config\nmodel_name m\nuse_gpu 0\n")
    (tipc / "configs" / "m" / "train.txt").write_text("===== train_params =====\nmodel_name:m\n")
    files = {"test_tipc/prepare.sh": prepare.replace("wget", "wget -q").encode()}
    rows = {r.entry.mode: r for r in compare_entries(str(root), files, Covered(), 2, 60) if "cpp" in r.entry.config}
    assert rows["cpp_infer"].entry.config == "test_tipc/configs/m/cpp.txt"
    assert rows["cpp_infer"].verdict == "CHANGED"
    assert rows["cpp_infer"].differences == ["- before: wget https://x/m.tgz", "+ after:  wget -q https://x/m.tgz"]


def test_whole_infer_finds_the_kl_quant_output_as_after_a_real_kl_quant_step(tmp_path):
    """PaddleClas's runner `cd`s into `<infer_model>/quant_post_static_model` (its kl_quant step's
    output) and then to deploy/: both trees run with that folder made, so the old script's infer
    runs in deploy/ as the new one's does, not at the root after two failed `cd`s."""
    old = (
        '#!/bin/bash\nFILENAME=$1\nMODE=$2\nif [ "$MODE" = "whole_infer" ]; then\n'
        "    cd ./m_infer/quant_post_static_model\n    cd ../../deploy\n    python3.7 infer.py\nfi\n"
    )
    new = '#!/bin/bash\nFILENAME=$1\nMODE=$2\nif [ "$MODE" = "whole_infer" ]; then\n    cd deploy\n    python3.7 infer.py\nfi\n'
    root = tmp_path / "repo"
    (root / "test_tipc" / "configs" / "m").mkdir(parents=True)
    (root / "test_tipc" / "test_train_inference_python.sh").write_text(old)
    config = "===== train_params =====\nmodel_name:m\nkl_quant:deploy/slim/quant.py -c x.yaml\ninfer_model:./m_infer/\n"
    (root / "test_tipc" / "configs" / "m" / "c.txt").write_text(config)
    files = {"test_tipc/test_train_inference_python.sh": new.encode()}
    rows = {r.entry.mode: r for r in compare_entries(str(root), files, Covered(), 2, 60)}
    assert rows["whole_infer"].verdict == "identical", rows["whole_infer"].differences
    # no kl_quant command: nothing made, the old script's failed `cd`s show
    (root / "test_tipc" / "configs" / "m" / "c.txt").write_text(
        config.replace("deploy/slim/quant.py -c x.yaml", "null")
    )
    rows = {r.entry.mode: r for r in compare_entries(str(root), files, Covered(), 2, 60)}
    assert rows["whole_infer"].verdict == "CHANGED"


# ---- the run cache (migrate/runcache.py)


def _counting(monkeypatch) -> list:
    """The runs that really ran (not answered from the cache), as (tree side, entry point)."""
    from tipcgen.migrate.entrypoints import Stager

    ran: list = []
    real = Stager._run

    def counted(self, entry, timeout):
        ran.append(entry)
        return real(self, entry, timeout)

    monkeypatch.setattr(Stager, "_run", counted)
    return ran


def _snapshot_rows(rows: list) -> list:
    return [(r.entry, r.verdict, r.detail, r.differences, r.before_exit, r.after_exit) for r in rows]


def test_a_second_comparison_of_the_same_trees_runs_nothing_and_reports_the_same(tmp_path, monkeypatch):
    """The user's second `migrate` (another option tried, a spec edited elsewhere): every run whose
    staged inputs are the same is answered from the run cache, and the rows are the same."""
    root = _repo(tmp_path)
    env = {"TIPC_CACHE": str(tmp_path / "cache")}
    files = {"test_tipc/run.sh": RUNNER.replace("--epochs=2", "--epochs=3").encode()}
    ran = _counting(monkeypatch)
    first = compare_entries(str(root), files, Covered(), 2, 60, environ=env)
    assert ran, "the first comparison runs the entry points"
    ran.clear()
    second = compare_entries(str(root), files, Covered(), 2, 60, environ=env)
    assert ran == [] and _snapshot_rows(second) == _snapshot_rows(first)
    assert any(r.verdict == "CHANGED" for r in second), "the change is still reported from the cache"
    # off: everything runs again
    compare_entries(str(root), files, Covered(), 2, 60, environ={**env, "TIPC_MIGRATE_CACHE": "0"})
    assert len(ran) >= len(first)


@pytest.mark.parametrize("change", ["config", "script", "generated", "corrupt record"])
def test_a_changed_input_runs_again_what_it_touches(tmp_path, monkeypatch, change):
    root = _repo(tmp_path)
    env = {"TIPC_CACHE": str(tmp_path / "cache")}
    files = {"test_tipc/run.sh": RUNNER.replace("--epochs=2", "--epochs=3").encode()}
    ran = _counting(monkeypatch)
    compare_entries(str(root), files, Covered(), 2, 60, environ=env)
    everything = len(ran)
    ran.clear()
    if change == "config":
        (root / "test_tipc/configs/tiny/train.txt").write_text(CONFIG.replace("tools/train.py", "tools/train2.py"))
    elif change == "script":  # a kept script of the old tree: every run of both trees has it staged
        (root / "test_tipc/alone.sh").write_text(ALONE.replace("alone.py", "alone2.py"))
    elif change == "generated":
        files = {"test_tipc/run.sh": RUNNER.replace("--epochs=2", "--epochs=4").encode()}
    else:
        for record in (tmp_path / "cache" / "migrate-runs").rglob("*.json"):
            record.write_text('{"version": 1, "key": "x", "commands": 5}')
    compare_entries(str(root), files, Covered(), 2, 60, environ=env)
    if change == "generated":  # only the switched tree's side runs again
        assert 0 < len(ran) < everything
    else:
        assert len(ran) == everything


def test_a_run_cut_at_its_bound_is_not_kept(tmp_path, monkeypatch):
    from tipcgen.migrate.entries import EntryPoint
    from tipcgen.migrate.entrypoints import Stager

    tree = {"test_tipc/hang.sh": b"#!/bin/bash\nwhile :; do :; done\n"}
    env = {"TIPC_CACHE": str(tmp_path / "cache")}
    ran = _counting(monkeypatch)
    for _ in range(2):  # a fresh Stager each time: its own memo would answer the second
        run = Stager(tree, {}, [], tmp_path, env).run(EntryPoint("test_tipc/hang.sh", None, None), 1)
        assert run.returncode is None
    assert len(ran) == 2 and not list((tmp_path / "cache").rglob("*.json"))


def test_a_runs_scratch_is_its_owners_to_write_whatever_the_umask(tmp_path):
    """Staged scripts keep their modes and every directory its owner's bits under a umask that
    takes them (a script writes its outputs beside itself, as in a checkout)."""
    import os
    import stat

    from tipcgen.migrate.entrypoints import Stager

    tree = {"test_tipc/run.sh": b"#!/bin/bash\necho hi > test_tipc/output/x\n", "test_tipc/lib/util.py": b"x = 1\n"}
    configs = {"test_tipc/configs/m/a.txt": b"model_name:m\n"}
    old = os.umask(0o277)
    try:
        scratch = tmp_path / "s"
        scratch.mkdir()
        root = Stager(tree, configs, [], tmp_path).stage(scratch, "test_tipc/configs/m/a.txt")
    finally:
        os.umask(old)
    assert stat.S_IMODE((root / "test_tipc/run.sh").stat().st_mode) == 0o755
    assert stat.S_IMODE((root / "test_tipc/lib/util.py").stat().st_mode) == 0o644
    assert stat.S_IMODE((scratch / "bin" / "python").stat().st_mode) == 0o755
    for where, _dirs, _files in os.walk(root):
        assert os.stat(where).st_mode & 0o700 == 0o700, where


# The switch writes a device wrapper of its own in place of the repo's (migrate/switch.py
# _name_devices): the repo's edits the checkout and fetches a file at run time, ours rewrites a
# copy and fetches nothing. Its entry points are faithful when their differences are the runner's
# own (faithful) ones plus lines a device deviation names; the runner's here: `--old` -> `--new`.
DEVICE_RUNNER_OLD = """#!/bin/bash
FILENAME=$1
MODE=$2
if [ "$MODE" = "lite_train_lite_infer" ]; then
    python3.7 "$(sed -n 3p "$FILENAME" | cut -d: -f2)" --old
fi
"""
DEVICE_RUNNER_NEW = DEVICE_RUNNER_OLD.replace("--old", "--new")
DEVICE_WRAPPER_OLD = """#!/bin/bash
FILENAME=$1
sed -i "s/train.py/train_npu.py/g" $FILENAME
wget https://x.example/tipc/instances_train2017.json
cmd="bash test_tipc/run.sh ${FILENAME} $2"
eval $cmd
"""
DEVICE_WRAPPER_NEW = """#!/bin/bash
config=$1
copy=test_tipc/output/device_npu/train.txt
mkdir -p test_tipc/output/device_npu
text=$(cat "$config")
printf '%s\\n' "${text//train.py/train_npu.py}" >"$copy"
bash test_tipc/run.sh "$copy" "$2"
"""


@pytest.mark.parametrize("extra", ["", "wget https://x.example/other.tar\n"], ids=["named", "unnamed-download"])
def test_a_generated_device_wrapper_is_faithful_by_the_runners_differences_and_its_own_deviations(tmp_path, extra):
    from tipcgen.dialects.devices import DEVICE_DEVIATIONS

    root = tmp_path / "repo"
    (root / "test_tipc" / "configs" / "m").mkdir(parents=True)
    (root / "test_tipc" / "run.sh").write_text(DEVICE_RUNNER_OLD)
    (root / "test_tipc" / "npu.sh").write_text(DEVICE_WRAPPER_OLD.replace("wget", extra + "wget"))
    (root / "test_tipc" / "configs" / "m" / "train.txt").write_text(CONFIG)
    covered = Covered({("run.sh", "test_tipc/configs/m/train.txt", "lite_train_lite_infer"): ("faithful", "flag")})
    covered.deviations = {"npu.sh": DEVICE_DEVIATIONS}
    files = {"test_tipc/run.sh": DEVICE_RUNNER_NEW.encode(), "test_tipc/npu.sh": DEVICE_WRAPPER_NEW.encode()}
    rows = {r.entry.script: r for r in compare_entries(str(root), files, covered, 2, 60)}
    row = rows["test_tipc/npu.sh"]
    assert "- before: wget https://x.example/tipc/instances_train2017.json" in row.differences
    assert "+ after:  python3.7 tools/train_npu.py --new" in row.differences
    if extra:  # a difference nothing names stays a change
        assert row.verdict == "CHANGED", row
    else:
        assert (row.verdict, row.detail) == (
            "faithful",
            "the differences of run.sh it runs (flag); device-no-annotation-download",
        )
    assert (root / "test_tipc" / "configs" / "m" / "train.txt").read_text() == CONFIG, "the checkout is not edited"


# A kept script running the generated runner (PaddleClas's dy2static script where no dy2static
# config typed its own): the runner's fixed sleeps are gone, and the aligned diff shows the kept
# script's own later commands as moved. Faithful by the runner's deviation when the new run is the
# old one without the dropped commands, in order; any other change stays a change.
SLEEPY_RUNNER_OLD = """#!/bin/bash
FILENAME=$1
MODE=$2
if [ "$MODE" = "lite_train_lite_infer" ]; then
    python3.7 "$(sed -n 3p "$FILENAME" | cut -d: -f2)" --epochs=1
    sleep 5
    python3.7 tools/eval.py
    sleep 5
fi
"""
LOSS_CHECK = """#!/bin/bash
FILENAME=$1
MODE=lite_train_lite_infer
cmd="bash test_tipc/run.sh ${FILENAME} $MODE"
eval $cmd
eval $cmd
python3.7 tools/extract_loss.py first
python3.7 tools/extract_loss.py second
"""


@pytest.mark.parametrize("edit", ["", "--epochs=2"], ids=["sleeps-dropped", "and-an-argument"])
def test_a_kept_script_running_the_generated_runner_is_faithful_by_the_commands_it_drops(tmp_path, edit):
    from tipcgen.plan.runners.paddleclas import DEVIATIONS

    root = tmp_path / "repo"
    (root / "test_tipc" / "configs" / "m").mkdir(parents=True)
    (root / "test_tipc" / "run.sh").write_text(SLEEPY_RUNNER_OLD)
    (root / "test_tipc" / "loss.sh").write_text(LOSS_CHECK)
    (root / "test_tipc" / "configs" / "m" / "train.txt").write_text(CONFIG)
    new = SLEEPY_RUNNER_OLD.replace("    sleep 5\n", "")
    if edit:
        new = new.replace("--epochs=1", edit)
    covered = Covered()
    covered.deviations = {"run.sh": DEVIATIONS}
    rows = compare_entries(str(root), {"test_tipc/run.sh": new.encode()}, covered, 2, 60)
    (row,) = [r for r in rows if r.entry.script == "test_tipc/loss.sh"]
    assert "- before: sleep 5" in row.differences
    if edit:
        assert row.verdict == "CHANGED", row
    else:
        assert (row.verdict, row.detail) == ("faithful", "the differences of run.sh it runs (no-fixed-sleeps)")
    (runner,) = [r for r in rows if r.entry.script == "test_tipc/run.sh"]
    assert runner.verdict == ("CHANGED" if edit else "faithful"), runner
