"""Time the worst hostile inputs end to end: each must be refused (or accepted) within its bound.

    python benchmarks/hostile_inputs.py [--only SUBSTRING]

Each case runs the real CLI in a fresh process, as CI would on a pull request's input, and prints
its wall time, the child's peak RSS, the verdict (refused = exit 2; failed = exit 1, a download
the server spoilt; accepted = exit 0) and whether a traceback escaped. Download cases talk to a
hostile HTTP server on 127.0.0.1 (drip, endless body, redirect loop, archive bombs), started here,
with short deadlines set through the environment.
Target: every case within 5 s, or within its own deadline + 5 s where it sets one, and within
400 MB of peak RSS (the gates' classes: links, FIFOs and devices at every input and output path of
a repo build, check, lint baseline, check cache and step summary). The sandbox cases (a repo's
hostile scripts under migrate and import --prepare) also fail on any change outside their scratch
copy or any process of theirs left running.
"""

from __future__ import annotations

import argparse
import gzip
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

TARGET = 5.0
RSS_BOUND = 400.0  # MB: a gate reads a bounded prefix, never the whole of /dev/zero or a 60 MB record
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
VALID = (REPO / "specs" / "tiny_rec.yml").read_text()
CONFIG = (REPO / "generated/tiny_rec/test_tipc/configs/tiny_rec/train_infer_python.txt").read_text()


@dataclass
class Case:
    name: str
    args: list[str]
    env: dict = field(default_factory=dict)
    bound: float = TARGET  # seconds allowed (a deadline the case sets, plus a margin)
    want: int = 2  # the exit code of a clean answer: 2 bad input, 1 a download that failed, 0 accepted
    argv: list[str] = field(default_factory=list)  # a command other than the CLI (the generated bash)
    cwd: str = "."
    rss: float = RSS_BOUND  # peak MB allowed
    check: Optional[Callable[[], list]] = None  # after the run: what it wrongly did (empty: nothing)


def _laughs(levels: int = 9, width: int = 9) -> str:
    lines = ["tipcgen: 1", "a0: &a0 [x]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def _blowup() -> str:
    """256 suites of a 4,096-combination matrix: the spec that took 48 s and 445 MB."""
    text = VALID.split("\nsuites:")[0]
    many = ", ".join(str(i) for i in range(1, 17))
    text = text.replace("values: [2]}", f"values: [{many}]}}").replace("values: [1, 6]}", f"values: [{many}]}}")
    text = text.replace("--precision, values: [fp32]", "--precision, values: [fp32, fp16]")
    text = text.replace("--enable_mkldnn, values: [False]", "--enable_mkldnn, values: [True, False]")
    text = text.replace("Global.auto_cast, values: [fp32]", "Global.auto_cast, values: [fp32, amp]")
    return text + "\nsuites:\n" + "".join(f"  s{i}:\n    file: t_{i}.txt\n    topology: [cpu]\n" for i in range(256))


def _spec_cases(tmp: Path) -> list[Case]:
    files = {
        "billion_laughs.yml": _laughs(),
        "deep_nesting.yml": VALID + "x: " + "[" * 1000 + "]" * 1000 + "\n",
        "1MiB_comments.yml": VALID + "#\n" * ((1 << 20) - len(VALID) - 10 >> 1),
        "50k_flow_list.yml": VALID + "x: [" + ", ".join(["1"] * 49_000) + "]\n",
        "50MB_file.yml": "#" * (50 << 20),
        "5000_digit_int.yml": VALID + "x: " + "9" * 5000 + "\n",
        "step_blowup.yml": _blowup(),
    }
    cases = []
    for name, text in files.items():
        (tmp / name).write_text(text)
        cases.append(Case(name, ["validate", str(tmp / name)], want=0 if name.startswith("1MiB") else 2))
    fifo = tmp / "fifo.yml"
    os.mkfifo(fifo)
    cases.append(Case("fifo spec", ["validate", str(fifo)]))
    huge = tmp / "huge_gpu_list.txt"
    huge.write_text(CONFIG.replace("gpu_list:", "gpu_list:" + "|".join(["0"] * 5000) + "|", 1))
    cases.append(Case("5000-entry gpu_list (plan)", ["plan", str(huge), "--layout", "paddleocr"]))
    return cases


def _link_cases(tmp: Path) -> list[Case]:
    """A config directory of 2,000 configs with one link to a file outside it."""
    secret = tmp / "outside" / "shadow"
    secret.parent.mkdir()
    secret.write_text("root:secret:19000::::::\n")
    cfg = tmp / "links" / "configs"
    for i in range(200):
        d = cfg / f"m{i}"
        d.mkdir(parents=True)
        for j in range(10):
            (d / f"m{i}_{j}_train_infer_python.txt").write_text(CONFIG.replace("tiny_rec", f"m{i}"))
    (cfg / "m0" / "x_train_infer_python.txt").symlink_to(secret)
    return [
        Case("link out of 2000 configs (lint)", ["lint", str(cfg)]),
        Case("link out of 2000 configs (import)", ["import", str(cfg), "--out", str(tmp / "links_out")]),
        Case("link out (plan)", ["plan", str(cfg / "m0" / "x_train_infer_python.txt"), "--mode", "whole_infer"]),
    ]


def _records(tmp: Path) -> list[Case]:
    d = tmp / "records"
    d.mkdir()
    big = d / "60MB.json"
    with big.open("w") as fh:
        fh.write('{"model_name": "m", "loss": [')
        fh.write(",".join(["0.5"] * 15_000_000))
        fh.write("]}")
    (d / "nested.json").write_text("[" * 200_000 + "]" * 200_000)
    fifo = d / "fifo.json"
    os.mkfifo(fifo)
    return [
        Case("60 MB record (report)", ["report", str(big), "--out", str(tmp / "rep1"), "--no-plots"]),
        Case("200k nested [ (report)", ["report", str(d / "nested.json"), "--out", str(tmp / "rep2"), "--no-plots"]),
        Case("FIFO record (report)", ["report", str(fifo), "--out", str(tmp / "rep3"), "--no-plots"]),
        Case("/dev/zero record (report)", ["report", "/dev/zero", "--out", str(tmp / "rep4"), "--no-plots"]),
        Case(
            "FIFO record (build --results)",
            ["build", str(REPO / "specs/tiny_rec.yml"), "--out", str(tmp / "b"), "--results", str(fifo)],
        ),
    ]


def _gate_cases(tmp: Path) -> list[Case]:
    """A switched repo whose generated files, manifest and specs folder are swapped for links,
    /dev/zero and FIFOs; baselines, the check cache and the step summary likewise."""
    cases = []
    spec = REPO / "specs" / "tiny_rec.yml"
    for name, make in (
        ("prepare.sh -> /dev/zero", lambda p: p.symlink_to("/dev/zero")),
        ("prepare.sh FIFO", os.mkfifo),
        ("manifest FIFO", os.mkfifo),
        ("manifest -> /etc/shadow", lambda p: p.symlink_to("/etc/shadow")),
    ):
        repo = tmp / f"gate_{len(cases)}"
        (repo / "test_tipc" / "specs").mkdir(parents=True)
        (repo / "test_tipc" / "specs" / "tiny_rec.yml").write_text(spec.read_text())
        subprocess.run([sys.executable, "-m", "tipcgen.cli", "build", "--root", str(repo)], capture_output=True)
        target = repo / "test_tipc" / (".tipcgen.manifest" if name.startswith("manifest") else "prepare.sh")
        target.unlink()
        make(target)
        cases.append(Case(f"repo {name} (check)", ["check", "--root", str(repo), "--no-cache"], want=1))
        cases.append(Case(f"repo {name} (build)", ["build", "--root", str(repo)]))
    repo = tmp / "gate_specs_link"
    (repo / "test_tipc").mkdir(parents=True)
    (repo / "test_tipc" / "specs").symlink_to(REPO / "specs")
    cases.append(Case("repo specs/ -> outside (build)", ["build", "--root", str(repo)]))
    fifo = tmp / "gate_fifo.json"
    os.mkfifo(fifo)
    deep = tmp / "gate_deep.json"
    deep.write_text("[" * 1_000_000)
    cases += [
        Case("baseline FIFO (lint)", ["lint", str(spec), "--baseline", str(fifo)]),
        Case("baseline /dev/zero (lint)", ["lint", str(spec), "--baseline", "/dev/zero"]),
        Case("baseline 1M nested [ (lint)", ["lint", str(spec), "--baseline", str(deep)]),
        Case("write-baseline /dev/zero (lint)", ["lint", str(spec), "--write-baseline", "/dev/zero"]),
        Case("write-baseline FIFO (lint)", ["lint", str(spec), "--write-baseline", str(fifo)]),
    ]
    cache = tmp / "gate_cache"
    cache.mkdir()
    os.mkfifo(cache / "check-v1.json")
    out = tmp / "gate_out"
    subprocess.run([sys.executable, "-m", "tipcgen.cli", "build", str(spec), "--out", str(out)], capture_output=True)
    cases.append(
        Case("check cache FIFO (check)", ["check", str(spec), "--out", str(out)], {"TIPC_CACHE": str(cache)}, want=0)
    )
    cases.append(
        Case("check cache 1M nested", ["check", str(spec), "--out", str(out)], {"TIPC_CACHE": str(tmp)}, want=0)
    )
    (tmp / "check-v1.json").write_text("[" * 1_000_000)
    # a run whose steps fail at once (python:false): its verdict (exit 1) must survive a step
    # summary that cannot be written
    failing = tmp / "gate_failing"
    shutil.copytree(REPO / "generated" / "tiny_rec", failing)
    config = failing / "test_tipc/configs/tiny_rec/train_infer_python.txt"
    config.write_text(config.read_text().replace("python:python3\n", "python:false\n", 1))
    for target in ("/dev/full", str(fifo)):
        cases.append(
            Case(
                f"GITHUB_STEP_SUMMARY={Path(target).name} (run)",
                ["run", str(config.relative_to(failing)), "--mode", "lite_train_lite_infer"],
                {"GITHUB_STEP_SUMMARY": target},
                want=1,
                cwd=str(failing),
            )
        )
    return cases


def _escape_cases(tmp: Path) -> list[Case]:
    """Reader-facing output under hostile text: a committed file of terminal control bytes in
    check's diff, forged manifest lines, a forged lint baseline, a status page of hostile records."""
    import hashlib
    import json
    import shutil

    cli = [sys.executable, "-m", "tipcgen.cli"]
    out = tmp / "esc_gen"
    subprocess.run([*cli, "build", str(REPO / "specs/tiny_rec.yml"), "--out", str(out)], check=True,
                   capture_output=True)  # fmt: skip
    (out / "tiny_rec/test_tipc/prepare.sh").write_bytes(b"\x1b[2K\rtipcgen check: up to date\x1b]0;x\x07\n" * 20000)
    repo = tmp / "esc_repo"
    (repo / "test_tipc/specs").mkdir(parents=True)
    shutil.copy(REPO / "specs/tiny_rec.yml", repo / "test_tipc/specs")
    subprocess.run([*cli, "build"], cwd=repo, check=True, capture_output=True)
    own = b"#!/bin/bash\n# the maintainers' own\n"
    (repo / "test_tipc/prepare.sh").write_bytes(own)
    manifest = repo / "test_tipc/.tipcgen.manifest"
    lines = [ln for ln in manifest.read_text().splitlines() if not ln.endswith("test_tipc/prepare.sh")]
    forged = [f"{hashlib.sha256(own).hexdigest()}  test_tipc/prepare.sh"]
    forged += [f"{'0' * 64}  test_tipc/hand_{i}.sh" for i in range(5000)]
    manifest.write_text("\n".join(lines + forged) + "\n")
    baseline = tmp / "esc_baseline.json"
    entry = {"rule": "TIPC001", "file": "x.txt", "role": "", "message": "m", "count": -1000000}
    baseline.write_text(json.dumps({"format": "tipcgen-lint-baseline", "version": 1, "findings": [entry]}))
    config = REPO / "generated/tiny_rec/test_tipc/configs/tiny_rec/train_infer_python.txt"
    records = tmp / "esc_records"
    sys.path.insert(0, str(REPO / "tests"))
    from helpers.history import run_report, stamp, write

    hostile = "\x1b[2K<img src=x onerror=alert(1)>\u202e|`` ` ``\r"
    for i in range(300):
        data = run_report(f"m{i % 7}{hostile}", hostile, ["passed", "failed", "skipped"], stamp(i),
                          reasons={1: hostile * 50})  # fmt: skip
        data["steps"][1]["log"] = "/etc/passwd"
        write(records / f"r{i}.json", data)
    return [
        Case(
            "1 MB of ESC/CR in a diff (check)",
            ["check", str(REPO / "specs/tiny_rec.yml"), "--out", str(out), "--no-cache"],
            want=1,
        ),
        Case("5000 forged manifest lines (build)", ["build"], cwd=str(repo)),
        Case("baseline count -1000000 (lint)", ["lint", str(config), "--baseline", str(baseline)]),
        Case("300 hostile records (status)", ["status", str(records), "--out", str(tmp / "esc_site")], want=0),
    ]


def _bombs() -> dict[str, bytes]:
    """A zip and a tar.gz of a few hundred KB that extract to 200 MB each."""
    zbuf = io.BytesIO()
    with zipfile.ZipFile(zbuf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("zeros.bin", b"\0" * (200 << 20))
    tbuf = io.BytesIO()
    with tarfile.open(fileobj=tbuf, mode="w:gz", compresslevel=9) as tf:
        info = tarfile.TarInfo("zeros.bin")
        info.size = 200 << 20
        tf.addfile(info, io.BytesIO(b"\0" * info.size))
    return {"/bomb.zip": zbuf.getvalue(), "/bomb.tar.gz": tbuf.getvalue(), "/small.gz": gzip.compress(b"x" * 4096)}


def _download_cases(tmp: Path, base: str) -> list[Case]:
    """Python prepare and `hash` against the hostile server, with a 3 s deadline."""
    env = {"TIPC_DEADLINE": "3", "TIPC_RETRIES": "1", "TIPC_CACHE": str(tmp / "cache")}
    cases = [
        Case("redirect loop (hash)", ["hash", f"{base}/loop"], env, want=1),
        Case("endless body (hash)", ["hash", f"{base}/endless"], env, bound=3 + TARGET, want=1),
        Case("drip 4 B/s (hash)", ["hash", f"{base}/drip"], env, bound=3 + TARGET, want=1),
        Case("/dev/zero (hash)", ["hash", "/dev/zero"]),
    ]
    steps = {
        "drip": f"- url: {base}/drip\n      to: ./data\n",
        "endless": f"- url: {base}/endless\n      size: 1000\n      to: ./data\n",
        "zip_bomb": f"- url: {base}/bomb.zip\n      to: ./data\n      extract: true\n",
        "tar_bomb": f"- url: {base}/bomb.tar.gz\n      to: ./data\n      extract: true\n",
        "file_url": "- url: file:///etc/shadow\n      to: ./data\n",
    }
    fleet_config = REPO / "generated/tiny_rec/test_tipc/configs/tiny_rec/train_linux_cpu_fleet_infer_python.txt"
    for option in ("--kill-grace", "--run-timeout", "--step-timeout"):
        args = ["fleet", str(fleet_config), "--mode", "lite_train_lite_infer", "--dry-run", option, "1e308"]
        cases.append(Case(f"fleet {option} 1e308", args))
    cases.append(Case("doctor --connect-timeout 1e308", ["doctor", str(fleet_config), "--connect-timeout", "1e308"]))
    for name, step in steps.items():
        repo = tmp / f"repo_{name}"
        repo.mkdir()
        spec = VALID.split("\nprepare:")[0] + "\nprepare:\n  lite_train_lite_infer:\n    " + step
        spec += "\ndefaults:" + VALID.split("\ndefaults:", 1)[1]
        (repo / "spec.yml").write_text(spec)
        args = ["prepare", str(repo / "spec.yml"), "--mode", "lite_train_lite_infer", "--root", str(repo)]
        want = 2 if name == "file_url" else 1
        cases.append(Case(f"{name} (prepare)", args, env, bound=3 + TARGET, want=want))
        if name == "file_url":
            continue
        # The same step in the generated prepare.sh (curl, the default downloader).
        built = subprocess.run(
            [sys.executable, "-m", "tipcgen.cli", "build", str(repo / "spec.yml"), "--out", str(tmp / f"out_{name}")],
            capture_output=True,
            text=True,
        )
        assert built.returncode == 0, built.stderr
        root = tmp / f"out_{name}" / "tiny_rec"
        bash = ["bash", "test_tipc/prepare.sh", "test_tipc/configs/tiny_rec/train_infer_python.txt"]
        argv = [*bash, "lite_train_lite_infer"]
        cases.append(Case(f"{name} (prepare.sh)", [], env, bound=3 + TARGET, want=1, argv=argv, cwd=str(root)))
    return cases


SANDBOX_TIMEOUT = 3.0


def _sandbox_cases(tmp: Path, cleanup: list) -> list[Case]:
    """`migrate` and `import --prepare` on a repo whose scripts try every way out of their scratch
    copy and then hang (tests/helpers/hostile_repo.py): nothing outside may change, no process of
    theirs may survive, and each run ends at --timeout (migrate: two such runs one after the other,
    prepare.sh's traces then the runner; import: one, the modes traced at once)."""
    from helpers.hostile_repo import HostileRepo

    cases = []
    t = str(SANDBOX_TIMEOUT)
    for name, args, runs, want in (
        ("hostile scripts (migrate)", ["migrate", "--mode", "lite_train_lite_infer", "--timeout", t], 2, 1),
        (
            "hostile scripts (import --prepare)",
            ["import", "test_tipc/configs", "--out", "../specs", "--timeout", t],
            1,
            0,
        ),
    ):
        h = HostileRepo.make(tmp / name.split("(")[1].rstrip(")").replace(" ", "_"))
        cleanup.append(h.close)
        env = {k: v for k, v in h.env().items() if k not in os.environ or os.environ[k] != v}
        bound = runs * SANDBOX_TIMEOUT + TARGET
        cases.append(Case(name, args, env, bound=bound, want=want, cwd=str(h.root), check=_outside(h)))
    return cases


def _outside(h) -> Callable[[], list]:
    return lambda: h.changed() + [f"survives: {line}" for line in h.survivors()]


def _peak_rss(pid: int) -> float:
    """The process's peak RSS so far in MB (VmHWM of its current image), 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _run(case: Case) -> tuple[float, float, int, bool]:
    """Wall seconds, peak RSS (MB) of the CLI process, exit code, no traceback."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            case.argv or [sys.executable, "-m", "tipcgen.cli", *case.args],
            cwd=case.cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env={**os.environ, **case.env},
        )
        peak = 0.0
        while proc.poll() is None:  # sampled: a peak shorter than 20 ms can be missed
            peak = max(peak, _peak_rss(proc.pid))
            time.sleep(0.02)
        took = time.perf_counter() - start
        err.seek(0)
        text = err.read()
        clean = b"Traceback" not in text
        if not clean or os.environ.get("HOSTILE_VERBOSE"):
            sys.stderr.write(text.decode("utf-8", "replace")[-3000:])
    return took, peak, proc.returncode, clean


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="", help="run the cases whose name contains this")
    opts = ap.parse_args()
    from helpers.http_server import PrepareServer

    server = PrepareServer()
    server.files.update(_bombs())
    server.files["/drip"] = gzip.compress(os.urandom(4096))
    for path, fault in (("/drip", "drip"), ("/endless", "endless"), ("/loop", "loop")):
        server.always(path, fault)
    server.start()
    cleanup: list = []
    try:
        with tempfile.TemporaryDirectory() as tmp_:
            bad, worst, worst_line = _all(Path(tmp_), server, opts.only, cleanup)
    finally:
        server.stop()
        for close in cleanup:
            close()
    print(f"worst (time / bound = {worst:.2f}): {worst_line.split('  ')[0].strip()}")
    print(f"{bad} case(s) out of bounds or answered wrongly")
    sys.exit(1 if bad else 0)


def _all(tmp: Path, server, only: str, cleanup: list) -> tuple[int, float, str]:
    """Run every case; (cases out of bounds or answered wrongly, worst ratio of time to bound, its line)."""
    base = server.url("/").rstrip("/")
    cases = _spec_cases(tmp) + _link_cases(tmp) + _records(tmp) + _gate_cases(tmp) + _escape_cases(tmp)
    cases += _download_cases(tmp, base) + _sandbox_cases(tmp, cleanup)
    worst, worst_line, bad = 0.0, "", 0
    print(f"{'case':<36} {'time':>7} {'bound':>6} {'RSS':>7}  verdict")
    for case in cases:
        if only not in case.name:
            continue
        took, rss, code, clean = _run(case)
        harm = case.check() if case.check else []
        ok = took <= case.bound and code == case.want and clean and rss <= case.rss and not harm
        bad += not ok
        verdict = {0: "accepted", 1: "failed", 2: "refused"}.get(code, f"exit {code}")
        over = took > case.bound or rss > case.rss
        note = ("" if clean else "  TRACEBACK") + ("" if ok else "  <- OVER" if over else "  <- WRONG")
        note += f"  HARM: {'; '.join(harm[:3])}" if harm else ""
        line = f"{case.name:<36} {took:6.2f}s {case.bound:5.1f}s {rss:6.0f}M  {verdict}{note}"
        print(line, flush=True)
        if took / case.bound > worst:
            worst, worst_line = took / case.bound, line
    return bad, worst, worst_line


if __name__ == "__main__":
    main()
