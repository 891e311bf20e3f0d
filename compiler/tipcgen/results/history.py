"""Run records accumulated over time, read for the status page: the JSON reports of `tipcgen
run` and `tipcgen fleet` and the records of `tipcgen bench`, each made one `Run` (model, chain,
mode, node, its steps' outcomes, where it came from).

Records come from other machines and pull requests: each is read as hostile input through the
one reader of records (run.provenance.read_record: a regular file, not a link, bounded); only
what run.provenance.record_kind calls a tipcgen record is read (other JSON in the folder, such
as Paddle's backup_env.*.json, is passed over without a word). A record is checked for the
fields the page uses (text cut at MAX_TEXT), and a bad one (not JSON, cut short, wrong types, a
newer schema) is reported with its path and left out; the rest render. Thousands are read per
page, so the checks are plain Python rather than bench's pydantic model. Records without a
`record` block (written before it existed) are schema 1 and still read.
"""

from __future__ import annotations

import datetime
import os
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from tipcgen.errors import SpecError, printable
from tipcgen.run.provenance import RECORD_KINDS, SCHEMA, read_record, record_kind

MAX_FILES = 20_000  # record files below one directory (200 runs x 20 models x run + bench, twice)
MAX_TEXT = 4096  # a name or reason shown on the page; longer text is cut, not refused
MAX_STEPS = 1000  # steps of one record (a plan has tens)
# lost: a fleet node whose transport died; refused: a fleet run the preflight refused
STATES = ("passed", "failed", "skipped", "timed out", "stalled", "stopped", "not run", "lost", "refused")
FAILING = ("failed", "timed out", "stalled", "stopped", "not run", "lost", "refused")


@dataclass(slots=True)
class StepCell:
    index: int
    kind: str
    group: str
    status: str  # one of STATES, else "unknown"
    reason: str = ""
    log: str = ""  # as the record names it (relative to the repo root)
    command: str = ""
    seconds: Optional[float] = None

    @property
    def key(self) -> tuple:
        return (self.index, self.kind, self.group)


@dataclass
class Run:
    path: str  # the record file
    kind: str  # run | fleet | bench
    model: str
    chain: str
    mode: str
    node: str  # a fleet node's address, a run's TIPC_NODE_IP; "" otherwise
    nodes: int
    finished_at: str
    schema: int
    meta: dict  # tipcgen, model_commit, paddle, host
    steps: list[StepCell] = field(default_factory=list)
    root: str = ""  # where the record's log paths start ("" unknown)
    log_dir: str = ""
    bench: Optional[dict] = None  # a bench record's fields (speed-up and trends read them)
    # the records' tree (records_tree): the page links only to logs inside it
    tree: str = ""
    suite: str = ""  # the spec's suite that ran ("": a legacy config, or a record before suites were named)
    config: str = ""  # the spec or config file it was planned from
    why: str = ""  # a run that never started (refused) or a node that was lost: the record's reason
    state: str = ""  # a fleet node's own state when it is lost or refused (its steps may all have ended well)
    cause: bool = False  # the node whose failure stopped a fleet run (the record's first_failure)

    @property
    def key(self) -> tuple:
        """What ran: two suites of one model (`--suite multiproc` beside the normal one), or two
        config files, are two rows, never one run compared with the other."""
        return (self.model, self.chain, self.mode, self.suite, self.config, self.node)


class BadRecord(Exception):
    pass


def _text(value: Any, what: str, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise BadRecord(f"{what}: a text is wanted, got {type(value).__name__}")
    return value[:MAX_TEXT]


def _int(value: Any, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise BadRecord(f"{what}: a whole number is wanted, got {type(value).__name__}")
    return value


MAX_NUMBER = 1e12  # no throughput, time or ratio of a real run comes near; charts stay finite


def _number(value: Any) -> Optional[float]:
    """A finite number of sane size (JSON's 1e400 parses as infinity), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if abs(value) <= MAX_NUMBER else None


def _status(value: Any, what: str) -> str:
    text = _text(value, what)
    return text if text in STATES else "unknown"


def _meta(block: dict) -> dict:
    machine = block.get("machine")
    machine = machine if isinstance(machine, dict) else {}
    return {
        "tipcgen": block.get("tipcgen"),
        "model_commit": block.get("model_commit"),
        "paddle": block.get("paddle"),
        "host": machine.get("host"),
    }


def _envelope(data: dict, kind: str) -> tuple[int, dict]:
    """(schema, the record block) of a tipcgen record; a newer schema is refused."""
    block = data.get("record")
    if block is None:
        return 1, {"tipcgen": data.get("tipcgen")}
    if not isinstance(block, dict):
        raise BadRecord("record: an object is wanted")
    schema = _int(block.get("schema"), "record.schema")
    if schema > SCHEMA:
        raise BadRecord(f"record.schema {schema}: written by a newer tipcgen (this one reads schemas 1 to {SCHEMA})")
    if schema < 1:
        raise BadRecord(f"record.schema {schema}: schemas start at 1")
    if kind not in _READERS:
        raise BadRecord(f"record.kind: one of {', '.join(RECORD_KINDS)} is wanted")
    return schema, block


def _mtime(path: str) -> str:
    stamp = datetime.datetime.fromtimestamp(os.stat(path).st_mtime, datetime.timezone.utc)
    return stamp.isoformat(timespec="seconds")


def _step(st: Any, where: str, full: bool) -> StepCell:
    """One step, checked field by field (the slow path, naming the first bad field)."""
    if not isinstance(st, dict):
        raise BadRecord(f"{where}: an object is wanted")
    return StepCell(
        index=_int(st.get("index"), f"{where}.index"),
        kind=_text(st.get("kind"), f"{where}.kind"),
        group=_text(st.get("group"), f"{where}.group", required=False),
        status=_status(st.get("status"), f"{where}.status"),
        reason=_text(st.get("reason"), f"{where}.reason", required=False),
        log=_text(st.get("log"), f"{where}.log", required=False),
        command=_text(st.get("command"), f"{where}.command", required=False) if full else "",
        seconds=_number(st.get("seconds")),
    )


_OPT_TEXT = (str, type(None))


def _steps(items: Any, what: str, full: bool) -> list[StepCell]:
    if not isinstance(items, list):
        raise BadRecord(f"{what}: a list is wanted")
    if len(items) > MAX_STEPS:
        raise BadRecord(f"{what}: more than {MAX_STEPS} steps")
    cells = []
    for i, st in enumerate(items):
        # the fast path: the shape `tipcgen run` writes; anything else is checked (and named) by _step
        g: Any = st.get if type(st) is dict else None
        if g is None or not (
            type(g("index")) is int
            and type(g("kind")) is str
            and g("kind")
            and type(g("status")) is str
            and all(type(g(k)) in _OPT_TEXT and len(g(k) or "") <= MAX_TEXT for k in ("group", "reason", "log"))
            and (not full or (type(g("command")) in _OPT_TEXT and len(g("command") or "") <= MAX_TEXT))
            and len(g("kind")) <= MAX_TEXT
        ):
            cells.append(_step(st, f"{what}[{i}]", full))
            continue
        status = g("status")
        secs = g("seconds")
        cells.append(
            StepCell(g("index"), g("kind"), g("group") or "", status if status in STATES else "unknown",
                     g("reason") or "", g("log") or "", (g("command") or "") if full else "",
                     _number(secs))
        )  # fmt: skip
    return cells


def chain_name(layout: str) -> str:
    """What the page calls a run's chain: its script's name (`train_inference_python`,
    `paddle2onnx`, `inference_cpp`, ...) for a layout tipcgen knows, else the record's text."""
    from tipcgen.dialects.chains import CHAIN_LAYOUTS

    if layout in CHAIN_LAYOUTS:
        return CHAIN_LAYOUTS[layout].dialect.script.removeprefix("test_").removesuffix(".sh")
    from tipcgen.dialects import LAYOUTS

    return "train_inference_python" if layout in LAYOUTS else layout


def _from_run(data: dict, path: str, base: dict) -> list[Run]:
    node = base.pop("node")
    steps = [st for st in data.get("steps") or [] if isinstance(st, dict)]
    run = Run(
        **base,
        model=_text(data.get("model_name"), "model_name"),
        chain=chain_name(_text(data.get("layout"), "layout")),
        mode=_text(data.get("mode"), "mode"),
        node=node,
        nodes=max([1] + [st["nodes"] for st in steps if isinstance(st.get("nodes"), int)]),
        log_dir=_text(data.get("log_dir"), "log_dir", required=False),
    )
    run.steps = _steps(data.get("steps"), "steps", full=True)
    return [run]


def _from_fleet(data: dict, path: str, base: dict) -> list[Run]:
    nodes = data.get("nodes")
    if not isinstance(nodes, list) or not nodes:
        raise BadRecord("nodes: a list of nodes is wanted")
    model = _text(data.get("model_name"), "model_name")
    mode = _text(data.get("mode"), "mode")
    chain = chain_name(_text(data.get("layout"), "layout", required=False)) or "fleet"
    log_dir = _text(data.get("log_dir"), "log_dir", required=False)
    first = data.get("first_failure")
    cause = first.get("node") if isinstance(first, dict) else None
    runs = []
    for i, n in enumerate(nodes):
        if not isinstance(n, dict):
            raise BadRecord(f"nodes[{i}]: an object is wanted")
        ip = _text(n.get("ip"), f"nodes[{i}].ip")
        base.pop("node", None)
        run = Run(**base, model=model, chain=chain, mode=mode, node=ip, nodes=len(nodes), log_dir=log_dir)
        run.steps = _steps(n.get("steps"), f"nodes[{i}].steps", full=False)
        state = _text(n.get("state"), f"nodes[{i}].state", required=False)
        if state in ("lost", "refused"):  # the whole node's reason: the page shows it beside the row
            why = _text(n.get("reason"), f"nodes[{i}].reason", required=False)
            run.why = why.removeprefix(f"{state}: ") or state  # the page's label says lost / refused
            run.state = state
        run.cause = ip == cause
        runs.append(run)
    return runs


_DEVICE_NUM = re.compile(r"N[0-9]{1,4}C[0-9]{1,6}\Z")


def _bench_fields(data: dict) -> dict:
    """The fields of a bench record the page uses, checked (`tipcgen report` checks all of them
    with bench's model; the page reads thousands of records and needs a few)."""
    out: dict[str, Any] = {k: _text(data.get(k), k) for k in ("model", "run_id", "fp_item")}
    for k in ("workers", "nodes", "global_batch_size"):
        count = out[k] = _int(data.get(k), k)
        if not 1 <= count <= 1 << 31:
            raise BadRecord(f"{k}: {count} is not a count from 1")
    if out["nodes"] > out["workers"]:
        raise BadRecord(f"nodes {out['nodes']} is more than workers {out['workers']}")
    ips = _number(data.get("ips"))
    if ips is None or ips < 0:
        raise BadRecord(f"ips: a number from 0 to {MAX_NUMBER:g} is wanted")
    out["ips"] = ips
    device_num = _text(data.get("device_num"), "device_num")
    if not _DEVICE_NUM.match(device_num):
        raise BadRecord(f"device_num: {device_num[:40]!r} is not NxCy")
    out["device_num"] = device_num
    for k in ("status", "run_mode", "device", "log_file", "finished_at", "speed_unit"):
        if data.get(k) is not None:
            out[k] = _text(data.get(k), k)
    codes = data.get("returncodes")
    out["returncodes"] = [c for c in codes if isinstance(c, int)] if isinstance(codes, list) else []
    if isinstance(data.get("convergence"), dict):
        out["convergence"] = {}  # a convergence run: no speed-up row (bench_report.passed)
    return out


def _from_bench(data: dict, path: str, base: dict) -> list[Run]:
    record = _bench_fields(data)
    status = record.get("status") or "passed"
    status = status if status in STATES else "unknown"
    base.pop("node", None)
    run = Run(
        **base,
        model=record["model"],
        chain="bench",
        mode=f"{record.get('run_mode') or 'run'} {record['device_num']} {record['fp_item']} "
        f"global batch {record['global_batch_size']:g}",
        node="",
        nodes=record["nodes"],
        bench=record,
    )
    if "finished_at" in record and "record" not in data:
        run.finished_at = record["finished_at"]
    log = record.get("log_file") or ""
    rc = [c for c in record["returncodes"] if c]
    run.steps = [StepCell(0, "train", record["run_id"], status, f"exit {rc[0]}" if rc else "", log)]
    return [run]


_READERS = {"run": _from_run, "fleet": _from_fleet, "bench": _from_bench}


def read_json(path: str) -> Any:
    """A record's JSON through the one bounded reader of records (run.provenance.read_record;
    no symbolic link), BadRecord otherwise."""
    try:
        return read_record(path, os.path.dirname(path) or ".", links=False)
    except SpecError as exc:
        problem = exc.problems[0]
        where = f"line {problem.line}: " if problem.line else ""
        field = f"{problem.field}: " if problem.field else ""
        raise BadRecord(f"{where}{field}{problem.message}") from None


_CONFIG_FIELD = {"run": "source", "fleet": "config", "bench": "config"}


def read_run(path: str) -> list[Run]:
    """The runs a record file holds (a fleet report: one per node; JSON that is no tipcgen
    record: none), or BadRecord."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise BadRecord("not a tipcgen record: a JSON object is wanted")
    kind = record_kind(data)
    if kind is None:  # other JSON beside the records (Paddle's backup_env.*.json): not ours
        return []
    schema, block = _envelope(data, kind)
    finished = block.get("finished_at")
    base = {
        "path": path,
        "kind": kind,
        "finished_at": finished if isinstance(finished, str) and finished else _mtime(path),
        "schema": schema,
        "meta": _meta(block),
        "root": block.get("root") if isinstance(block.get("root"), str) else "",
        "node": block.get("node") if isinstance(block.get("node"), str) and kind == "run" else "",
        "suite": _text(block.get("suite"), "record.suite", required=False),
        # records before `record.config`: the run's own `source` (the spec or config given)
        "config": _text(block.get("config", data.get(_CONFIG_FIELD[kind])), "record.config", required=False),
    }
    return _READERS[kind](data, path, base)


def record_files(root: str) -> tuple[list[str], list[str]]:
    """(*.json files below `root`, sorted; problems). Links are not followed: a record is a
    file in the tree given, as `tipcgen bench` and `run` write them."""
    found: list[str] = []
    problems: list[str] = []
    stack = [root]
    while stack:
        top = stack.pop()
        try:
            with os.scandir(top) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            problems.append(f"{printable(top)}: skipped: {exc.strerror or exc}")
            continue
        subdirs = []
        for e in entries:
            if e.is_dir(follow_symlinks=False):
                subdirs.append(e.path)
            elif e.name.endswith(".json"):
                if e.is_symlink():
                    problems.append(f"{printable(e.path)}: skipped: a symbolic link (records are files)")
                    continue
                found.append(e.path)
                if len(found) >= MAX_FILES:
                    problems.append(f"{printable(root)}: more than {MAX_FILES} records; the rest were not read")
                    return sorted(found), problems
        stack.extend(reversed(subdirs))
    return sorted(found), problems


def records_tree(path: str) -> str:
    """Where the logs of the records found at `path` may be linked from: the model repo holding
    them (the nearest directory above with test_tipc/ or tipcgen.yml: records written inside the
    repo they ran in), else the directory given (a file: its directory). Found on the disk, never
    taken from a record: a record's `root` of `/` widens nothing."""
    from tipcgen.project import is_repo_root

    base = path if os.path.isdir(path) else os.path.dirname(path) or "."
    d = os.path.realpath(base)
    while True:
        if is_repo_root(d):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return base
        d = parent


def load_history(paths: list[str]) -> tuple[list[Run], list[str]]:
    """Every run of the records in `paths` (files, or directories walked for *.json), oldest
    first, and one line per record left out ("path: why")."""
    runs: list[Run] = []
    problems: list[str] = []
    for p in paths:
        files, found = record_files(p) if os.path.isdir(p) else ([p], [])
        tree = records_tree(p)
        problems += found
        for f in files:
            try:
                read = read_run(f)
            except BadRecord as exc:
                problems.append(f"{printable(f)}: skipped: {printable(str(exc))}")
                continue
            for r in read:
                r.tree = tree
            runs += read
    runs.sort(key=lambda r: (r.finished_at, r.path, r.node))
    return runs, problems
