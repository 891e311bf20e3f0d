"""The scripts a migration keeps (test_paddle2onnx.sh, the PTQ, serving and Lite scripts, the
npu/xpu wrappers) keep working after `--apply`, which replaces the repo's common_func.sh and
test_train_inference_python.sh with ours.

1. Differential: for each family, the repo's own common_func.sh is sourced in one bash and ours in
   another; every public function is called on the same table of hostile inputs (empty, `null`,
   blanks, `|`, colons, globs, echo options, backslashes, under the caller IFS values the kept
   scripts set). Stdout, exit status, the variables status_check leaves its caller and the status
   log files must be identical.
2. Real kept scripts run under the recording harness (oracle.run_upstream) on a staged tree whose
   common_func.sh (or runner) is ours must record what they record with the repo's own.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers.upstream import upstream_dir
from tipcgen.dialects import get_layout
from tipcgen.emit.files import kept_funcs, runner_script

# upstream folder -> (our layout, the runner whose common_func.sh replaces the repo's)
FAMILIES = {
    "PaddleClas": ("paddleclas", "paddleclas"),
    "PaddleSeg": ("paddleseg", "paddleseg"),
    "PaddleVideo": ("paddlevideo", "paddlevideo"),
    "models": ("models", "models"),
    "PaddleOCR/head": ("paddleocr", "ocr_head"),
    "PaddleOCR/seed-era": ("paddleocr", "ocr"),
}

# Lines as the kept scripts pass them: key:value rows of a config, with the hostile variants.
LINES = [
    "",
    "null",
    ":",
    "::",
    "key",
    "key:",
    ":value",
    "key:value",
    "key:null",
    "key:a:b",
    "http_key:http://host:8080/x.tar",
    " key : value with blanks ",
    "key:a b  c",
    "key:a|b||c|",
    "key:|",
    "key:*.py",
    "key:nomatch*",
    "key:[{float32,[3,224,224]}]",
    "-n:-e",
    "key:-n",
    "key:a\\tb",
    "key:a\\:b",
    "--profiler_options:batch_range=[10,20];state=GPU;profile_path=model.profile",
    "norm_train:tools/train.py -c configs/a.yaml -o Global.epochs=2",
    "Global.use_gpu:True|False",
    "--precision:fp32|fp16|int8",
]
PARAM_LINES = [
    "",
    "null",
    "epoch:lite_train_lite_infer=1|whole_train_whole_infer=3|whole_infer=",
    "epoch:lite_train_lite_infer=|whole_infer=2",
    "epoch:lite_train_lite_infer=1 2|lite_train_lite_infer=3",
    "epoch:lite_train_*=5|whole_infer=*.py",
    "epoch:=x|lite_train_lite_infer=a=b",
    "epoch:lite_train_lite_infer",
    "epoch",
    "epoch:|||",
]
MODES = ["lite_train_lite_infer", "whole_infer", "lite_train_*", "", "no such mode"]
KEYS = ["", "null", "--k", "-o Global.k", "a b", "a|b", "-n", "null x", "nullx", "*.py", "k=v"]
VALUES = ["", "null", " ", "v", "a b", "a|b", "-e", "NULL", "  ", "*.py", "a=b"]
# The IFS values the kept scripts leave set when they call (None: unset, the shell's default).
CALLER_IFS = [None, "|", "\n", " ", ":"]
STATUSES = ["0", "1", "", "0 0", "x", "-1", "127"]
COMMANDS = [
    "python3.7 tools/export.py -c a.yml",
    "",
    "cmd with \\n escape and \\c cut",
    "a|b|c",
    "-n",
    "  spaced  out  ",
]
STATUS_LOGS = ["results_python.log", "", "two logs.log", "a|b.log", "out/../results.log"]
GLOBALS = ("last_status", "run_command", "run_log", "model_name", "log_path", "extra_args", "i", "MODE", "IFS")


def _call(func: str, args: list, ifs=None, direct: bool = False, mode=None, errexit: bool = False) -> str:
    """One case: the function called in a subshell (upstream's set their caller's IFS and
    variables), its stdout and exit status; `direct`: then the variables it left set; `errexit`:
    in a caller that runs with `set -e`."""
    pre = "unset IFS; " if ifs is None else f"IFS={shlex.quote(ifs)}; "
    if errexit:
        pre += "set -e; "
    if mode is not None:
        pre += f"MODE={shlex.quote(mode)}; "
    call = " ".join([func, *(shlex.quote(a) for a in args)])
    show = ""
    if direct:
        show = (
            "; unset IFS; for v in " + " ".join(GLOBALS) + '; do if [[ -v $v ]]; then declare -p "$v"; '
            'else echo "$v: unset"; fi; done'
        )
    return f'echo {shlex.quote("### " + call)}\n( {pre}{call}; echo "rc=$?"{show} )\n'


def _cases(funcs) -> list[str]:
    cases = []
    for line in LINES:
        for ifs in (None, "|"):
            cases.append(_call("func_parser_key", [line], ifs))
            cases.append(_call("func_parser_value", [line], ifs))
        if "lite" in funcs.extras:
            for sep in (":", "|", " ", "="):
                cases.append(_call("func_parser_value_lite", [line, sep]))
        if "cpp" in funcs.extras:
            cases.append(_call("func_parser_key_cpp", [line]))
            cases.append(_call("func_parser_value_cpp", [line]))
    for key in KEYS:
        for value in VALUES:
            for ifs in (None, "|"):
                cases.append(_call("func_set_params", [key, value], ifs))
    if "amp" in funcs.extras:
        for value in ["fp16", "amp", "fp32", "", "null", "fp16 ", "AMP"]:
            cases.append(_call("func_set_amp_params", ["autocast", value]))
    for line in PARAM_LINES:
        for mode in MODES:
            # the mode as $2, and a caller's MODE that differs from it (PaddleSeg's reads that one)
            cases.append(_call("func_parser_params", [line, mode], mode=mode))
            cases.append(_call("func_parser_params", [line, mode], mode="whole_infer"))
    k = 0
    for n, status in enumerate(STATUSES):
        for command in COMMANDS:
            for log in STATUS_LOGS[: 2 + n % 4]:
                k += 1  # each one under the default IFS and one other caller IFS in turn
                for ifs in {None, CALLER_IFS[k % len(CALLER_IFS)]}:
                    args = [status, command, log, "model name", f"./logs/{n}.log"]
                    cases.append(_call("status_check", args, ifs, direct=True))
    cases.append(_call("status_check", ["0", "four arguments", "results_python.log", "m"], direct=True))
    # A caller with `set -e` goes on after each call (its rc= line shows). The parsers are called
    # as the kept scripts call them, in $(...): upstream's also leave their scratch variables
    # (strs, array, tmp, ...) set when called directly, which no kept script relies on.
    for line in ("key:value", "", "key:a|b"):
        cases.append(_call("func_parser_value", [line], errexit=True))
        cases.append(_call("func_set_params", ["k", line], errexit=True))
        cases.append(_call("func_parser_params", [line, "key"], errexit=True))
    cases.append(_call("status_check", ["1", "c", "results_python.log", "m", "l"], errexit=True, direct=True))
    if "seg" in funcs.extras:
        for args in (["a", "b", "b"], ["a", "b", "c"], ["x"], [], ["a b", "a b"], ["*", "*.py"]):
            cases.append(_call("contains", args, direct=True))
        for args in (["l1", "a;b c;;d"], ["only"], [], ["x", "*.py;k=v"], ["a", ""]):
            cases.append(_call("parse_extra_args", args, direct=True))
        for args in (["a/b.yml", "_q"], ["noext", "_x"], ["a.b.c", ""], ["", "s"], [".hidden", "-1"]):
            cases.append(_call("add_suffix", args))
    return cases


def _run(common: Path, driver: str, cwd: Path) -> tuple[str, dict]:
    """Source `common` in a fresh bash in `cwd` (a few files for the globs to find), run the
    cases; -> (stdout, {file: bytes} of what the calls wrote)."""
    cwd.mkdir()
    for name in ("a.py", "b.py", "B.py", "x y.py"):
        (cwd / name).write_text("")
    (cwd / "logs").mkdir()
    (cwd / "out").mkdir()
    script = cwd.parent / f"{cwd.name}.sh"
    script.write_text(f"source {shlex.quote(str(common))}\n{driver}")
    done = subprocess.run(
        ["bash", "--norc", "--noprofile", str(script)],
        cwd=cwd,
        capture_output=True,
        timeout=240,
        env={"PATH": os.environ["PATH"], "LC_ALL": "C"},
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    files = {str(p.relative_to(cwd)): p.read_bytes() for p in sorted(cwd.rglob("*")) if p.is_file()}
    return done.stdout.decode("utf-8", "replace"), files


@pytest.fixture(scope="module")
def upstream() -> Path:
    path = upstream_dir()
    if not (path / "PaddleSeg" / "common_func.sh").is_file():
        if os.environ.get("TIPC_REQUIRE_CORPUS"):
            pytest.fail(f"TIPC_REQUIRE_CORPUS is set but the upstream scripts are missing at {path}")
        pytest.skip(f"upstream scripts not found at {path} (set TIPC_UPSTREAM to ../shared/upstream)")
    return path


def ours(layout: str, runner: str, where: Path) -> Path:
    """Our generated common_func.sh for a family, written to `where`."""
    where.write_text(runner_script(get_layout(layout), "tipcgen test", runner)[1])
    return where


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_common_func_helpers_print_and_log_what_the_repos_own_do(tmp_path, upstream, family):
    layout, runner = FAMILIES[family]
    funcs = kept_funcs(runner)
    assert funcs is not None
    cases = _cases(funcs)
    driver = "".join(cases)
    theirs_out, theirs_files = _run(upstream / family / "common_func.sh", driver, tmp_path / "theirs")
    ours_out, ours_files = _run(ours(layout, runner, tmp_path / "common_func.sh"), driver, tmp_path / "ours")
    theirs_cases, ours_cases = theirs_out.split("### "), ours_out.split("### ")
    assert len(theirs_cases) == len(cases) + 1
    differ = [(a, b) for a, b in zip(theirs_cases, ours_cases) if a != b]
    assert not differ, (
        f"{len(differ)} of {len(cases)} cases differ; first: upstream\n{differ[0][0]}\nours\n{differ[0][1]}"
    )
    assert ours_files == theirs_files
    # the status logs were written (the cases reach the file side, not only stdout)
    assert b"Run successfully with command - model name - python3.7" in theirs_files["results_python.log"]
    assert "two" in theirs_files and "logs.log" in theirs_files


def test_every_family_with_a_common_func_has_one_record_and_detection_none():
    """The families whose scripts source test_tipc/common_func.sh have a record (their status
    line: the runner module's); PaddleDetection's source their own utils_func.sh."""
    from tipcgen.plan.runners import models, ocr_head, paddleclas, paddleclas_ptq

    assert kept_funcs("paddleclas_ptq") is kept_funcs("paddleclas") or (
        kept_funcs("paddleclas_ptq") == kept_funcs("paddleclas")
    )
    assert kept_funcs("paddleclas").status_format == paddleclas.STATUS_FORMAT == paddleclas_ptq.STATUS_FORMAT
    assert kept_funcs("ocr").status_format == kept_funcs("ocr_head").status_format == ocr_head.STATUS_FORMAT
    assert kept_funcs("models").status_format == models.STATUS_FORMAT
    assert kept_funcs("paddledetection") is None
    common = runner_script(get_layout("paddledetection"), "b")[1]
    assert "status_check" not in common


def _tree(tmp_path: Path, upstream: Path, family: str, replace: dict) -> Path:
    """A copy of the repo's test_tipc/ scripts with some files replaced by ours."""
    tree = tmp_path / f"staged-{len(list(tmp_path.iterdir()))}" / family.split("/")[-1]
    shutil.copytree(upstream / family, tree, symlinks=True)
    for name, text in replace.items():
        (tree / name).write_text(text)
    return tree


def _recorded(run) -> tuple:
    """What a run did, its scratch directory named `<scratch>` (each run has its own)."""
    scratch = str(Path(run.root).parent)

    def norm(text: str) -> str:
        return text.replace(scratch, "<scratch>")

    return (
        run.returncode,
        [(tuple(norm(a) for a in c.argv), c.cuda_visible_devices, norm(c.cwd)) for c in run.commands],
        [norm(line) for line in run.status_lines],
        sorted(run.logs),
    )


# The kept chain scripts that source test_tipc/common_func.sh, each with one config of its chain
# from the corpus (the first by name), per family that has a common_func.sh.
KEPT_CHAINS = (
    "test_paddle2onnx.sh",
    "test_ptq_inference_python.sh",
    "test_serving_infer_python.sh",
    "test_serving_infer_cpp.sh",
    "test_inference_cpp.sh",
)
# Programs those scripts (and PaddleClas's Lite preparation) run besides the interpreter: recorded
# too, so a difference in what they are given shows.
KEPT_TOOLS = ("pip3", "wget", "tar", "cp", "sed", "unzip", "git", "make", "cmake", "adb")

# Scripts whose exit status is that of their last `ps ux | grep -E 'web_service' | awk ... | xargs
# kill -s 9`, which races with the grep it lists (123 when the grep is gone first): it varies from
# run to run with the repo's own common_func.sh too.
RACY_EXIT = ("test_serving_infer_python.sh",)


def _chain_configs(corpus: Path, family: str) -> list:
    from tipcgen.dialects import chain_of

    found: dict = {}
    for path in sorted((corpus / family.split("/")[0]).rglob("*.txt")):
        chain = chain_of(path.read_text(errors="replace"))
        if chain is not None and chain[1] in KEPT_CHAINS and chain[1] not in found:
            found[chain[1]] = path
    return sorted(found.items())


def _run_both(tmp_path, upstream, family, config, mode, script, replace, **kw):
    """(the run with the repo's own files, the run with `replace` ours) of one script."""
    from helpers.upstream import run_upstream

    keep = {"keep": True, "scratch": None}
    theirs = run_upstream(upstream / family, config, mode, repo=family, script=script, **keep, **kw)
    staged = _tree(tmp_path, upstream, family, replace)
    ours_run = run_upstream(staged, config, mode, repo=family, script=script, **keep, **kw)
    return theirs, ours_run


def _outputs(run) -> dict:
    """Every file a run left in its scratch repo but the staged scripts: status logs, logs,
    what a script wrote (config copies, sed-edited files), with their contents."""
    root = Path(run.root)
    files = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not path.is_symlink() and rel != "test_tipc/common_func.sh":
            files[rel] = path.read_bytes().replace(str(root.parent).encode(), b"<scratch>")
    shutil.rmtree(root.parent, ignore_errors=True)
    return files


@pytest.mark.corpus
@pytest.mark.sandbox
@pytest.mark.parametrize("family", ["PaddleClas", "PaddleSeg", "PaddleVideo", "models"])
def test_kept_chain_scripts_record_the_same_with_our_common_func(tmp_path, upstream, corpus, family):
    """Each kept chain script of the family, on a corpus config of its chain, with the repo's
    common_func.sh and then with ours: the same commands (argv, CUDA_VISIBLE_DEVICES, cwd), exit
    status, status lines and files."""
    layout, runner = FAMILIES[family]
    common = runner_script(get_layout(layout), "tipcgen test", runner)[1]
    configs = _chain_configs(corpus, family)
    assert configs, f"no kept chain config of {family} in the corpus"
    ran = []
    for script, config in configs:
        if not (upstream / family / script).is_file():
            continue
        theirs, ours_run = _run_both(
            tmp_path, upstream, family, config, "whole_infer", script, {"common_func.sh": common}, tools=KEPT_TOOLS
        )
        assert not theirs.timed_out and not ours_run.timed_out, script
        assert theirs.commands, f"{script} on {config.name} ran nothing with the repo's own common_func.sh"
        a, b = _recorded(theirs), _recorded(ours_run)
        if script in RACY_EXIT:  # everything but the exit status
            a, b = a[1:], b[1:]
        assert b == a, f"{family}/{script} on {config}"
        assert _outputs(ours_run) == _outputs(theirs), f"{family}/{script} on {config}"
        ran.append(script)
    assert "test_paddle2onnx.sh" in ran


@pytest.mark.corpus
@pytest.mark.sandbox
@pytest.mark.parametrize("family", ["PaddleClas", "models"])
def test_lite_preparation_sources_our_common_func_and_does_the_same(tmp_path, upstream, corpus, family):
    """prepare_lite_arm_cpu_cpp.sh reads its Lite config with func_parser_value_lite: with ours it
    fetches, copies and builds the same (recorded) as with the repo's own."""
    layout, runner = FAMILIES[family]
    common = runner_script(get_layout(layout), "tipcgen test", runner)[1]
    configs = sorted(p for p in (corpus / family).rglob("*lite*arm*cpp*.txt"))
    assert configs, f"no Lite config of {family} in the corpus"
    theirs, ours_run = _run_both(
        tmp_path,
        upstream,
        family,
        configs[0],
        "whole_infer",
        "prepare_lite_arm_cpu_cpp.sh",
        {"common_func.sh": common},
        tools=KEPT_TOOLS,
        dirs=("deploy/lite",),
    )
    assert theirs.commands
    assert _recorded(ours_run) == _recorded(theirs)
    assert _outputs(ours_run) == _outputs(theirs)


# --- the npu/xpu wrappers: they sed the runner's `"gpu"` (and the config), then run it ---

WRAPPED = {  # upstream folder -> our layout (its default runner follows that repo's script)
    "PaddleClas": "paddleclas",
    "PaddleDetection": "paddledetection",
    "PaddleSeg": "paddleseg",
    "PaddleVideo": "paddlevideo",
}
# What a wrapper's sed of the runner matches that our runner has no text for, with why: the
# runner's named deviation.
RUNNER_EDITS_WITHOUT_TEXT = {
    r"\$\{model_name\}/train\.log": "train-status-from-trainer: ours reports the trainer's exit, not a cat of its train.log",
}


def _runner_seds(wrapper: Path) -> list:
    """(pattern regex, replacement) of each `sed -i "s/A/B/g" test_tipc/test_train_inference_python.sh`
    of a wrapper, unescaped as sed reads them (a backslash and a character: that character)."""
    import re

    edits = []
    for line in wrapper.read_text().splitlines():
        found = re.search(r"""sed -i (["'])s/(.*)/(.*)/g\1 test_tipc/test_train_inference_python\.sh""", line)
        if found:
            pattern, repl = (re.sub(r"\\(.)", r"\1", part) for part in found.group(2, 3))
            edits.append((re.escape(pattern), repl))
    return edits


@pytest.mark.parametrize("family", sorted(WRAPPED))
def test_generated_runner_has_the_text_the_wrappers_sed_where_upstreams_has_it(upstream, family):
    """Each `sed -i s/A/B/g` a wrapper applies to the runner (`"gpu"` -> `"npu"`, PaddleClas's
    xpu path edits) matches our generated runner as often as upstream's, and the edited runner is
    still bash; no `"npu"`/`"xpu"` literal of ours is there for a sed to hit."""
    import re

    theirs = (upstream / family / "test_train_inference_python.sh").read_text()
    ours_text = runner_script(get_layout(WRAPPED[family]), "tipcgen test")[0]
    seen = 0
    for device in ("npu", "xpu"):
        edits = _runner_seds(upstream / family / f"test_train_inference_python_{device}.sh")
        assert any(repl == f'"{device}"' for _, repl in edits), (family, device, edits)
        edited = ours_text
        for pattern, repl in edits:
            if pattern in RUNNER_EDITS_WITHOUT_TEXT:
                assert not re.search(pattern, ours_text) and re.search(pattern, theirs)
                continue
            assert len(re.findall(pattern, ours_text)) == len(re.findall(pattern, theirs)) > 0, (family, pattern)
            edited = re.sub(pattern, lambda _m, r=repl: r, edited)
            seen += 1
        done = subprocess.run(["bash", "-n"], input=edited.encode(), capture_output=True)
        assert done.returncode == 0, done.stderr
    for literal in ('"npu"', '"xpu"'):
        assert literal not in ours_text and literal not in theirs
    assert seen >= 2


def _signature(theirs, ours_run) -> tuple:
    """How two runs differ: commands only one side ran (with their counts), status lines only one
    side wrote, logs only one side has."""
    from collections import Counter

    a, b = _recorded(theirs), _recorded(ours_run)
    ca, cb = Counter(a[1]), Counter(b[1])
    sa, sb = Counter(a[2]), Counter(b[2])
    return (
        sorted((ca - cb).items(), key=repr),  # (a command's CUDA_VISIBLE_DEVICES may be None)
        sorted((cb - ca).items(), key=repr),
        sorted((sa - sb).items(), key=repr),
        sorted((sb - sa).items(), key=repr),
        sorted(set(a[3]) ^ set(b[3]), key=repr),
    )


def _device_config(corpus: Path, family: str) -> Path:
    """A train config of the family whose inference device list names gpu (or True), the value
    the wrappers rename."""
    from helpers.upstream import train_configs

    for path in train_configs(corpus, family):
        text = path.read_text(errors="replace")
        if any(line.split(":", 1)[-1] in ("gpu|cpu", "cpu|gpu", "True|False") for line in text.splitlines()[35:]):
            return path
    raise AssertionError(f"no train config of {family} with a gpu inference device")


@pytest.mark.corpus
@pytest.mark.sandbox
@pytest.mark.parametrize("device", ["npu", "xpu"])
@pytest.mark.parametrize("family", sorted(WRAPPED))
def test_device_wrapper_runs_our_runner_as_it_runs_upstreams(tmp_path, upstream, corpus, family, device):
    """bash test_tipc/test_train_inference_python_<device>.sh CONFIG MODE with the repo's runner and
    with ours: they differ only where the two runners differ without the wrapper on the config the
    wrapper edited (the train runner's named deviations, which tests/test_upstream_*.py hold
    explained), and the runner's `"gpu"` -> `"<device>"` edit changes both the same way."""

    layout = WRAPPED[family]
    script, common = runner_script(get_layout(layout), "tipcgen test")
    # The harness's `sleep` returns at once (upstream sleeps between steps), which would fire our
    # step limits' watchdog at once: the staged copy runs without step limits.
    ours_runner = script.replace("\n", "\nexport TIPC_STEP_TIMEOUT=0\n", 1)
    # (PaddleDetection's scripts source their utils_func.sh: our common_func.sh is only the runner's)
    replace = {"test_train_inference_python.sh": ours_runner, "common_func.sh": common}
    config = _device_config(corpus, family)
    mode = "lite_train_lite_infer"
    wrapper = f"test_train_inference_python_{device}.sh"
    tools = ("python3.9", "perl")
    theirs, ours_run = _run_both(tmp_path, upstream, family, config, mode, wrapper, replace, tools=tools)
    edited_root = Path(theirs.root)
    edited = next((edited_root / "test_tipc" / "configs").rglob(config.name))
    saved = tmp_path / "edited" / config.parent.name / config.name
    saved.parent.mkdir(parents=True)
    saved.write_bytes(edited.read_bytes())
    wrapped = _signature(theirs, ours_run)
    wrapped_infer = sum(1 for c in ours_run.commands if "infer" in " ".join(c.argv[1:2]))
    _outputs(theirs), _outputs(ours_run)  # removes the kept scratch directories
    assert theirs.commands and not theirs.timed_out and not ours_run.timed_out
    plain_theirs, plain_ours = _run_both(
        tmp_path, upstream, family, saved, mode, "test_train_inference_python.sh", replace, tools=tools
    )
    plain = _signature(plain_theirs, plain_ours)
    plain_infer = sum(1 for c in plain_ours.commands if "infer" in " ".join(c.argv[1:2]))
    _outputs(plain_theirs), _outputs(plain_ours)
    assert wrapped == plain, f"{family} {device}: the wrapper changes how ours differs from upstream's"
    if family in ("PaddleDetection", "PaddleSeg"):
        # their configs name the device gpu: the renamed value reaches the GPU branch only
        # through the runner's edited literal, in upstream's runner and in ours
        assert wrapped_infer > plain_infer, (wrapped_infer, plain_infer)
        assert wrapped == ([], [], [], [], []), wrapped
