"""`tipcgen doctor`: a preflight for this node of a suite, one verdict per check.

Each check is a function returning a `Check` (name, verdict, what it found, how to fix it) from
values it is handed: the environment, the plan's launcher arguments, the paddle found by the
python check. The real probes (bind, connect, a subprocess) are default arguments, so a test can
hand in other real ones (a listener it opened, a port nobody listens on) without mocks.

Verdicts: ok, warn (the run may still work), fail (it will not), skip (nothing to check here).

Facts about paddle.distributed.launch (paddle >= 2.3, read in its launch/ package): with `--ips`
every node's process i listens on `<its ip>:<start port + i>`, trainer 0's first port is the
job's master; the start port is the env PADDLE_START_PORT, else `--start_port`, else 6070 (the
generated runner exports FLAGS_START_PORT as PADDLE_START_PORT when that is unset); this
node's address is the env POD_IP, else `--host`, else its host name's address, and a node whose
address is not in `--ips` takes rank 0 like the first node. The legacy launcher (fleetrun, paddle
< 2.3) reads FLAGS_START_PORT and otherwise picks random ports on every node.

Time bounds (the run never waits longer): binds and file checks are immediate; the host name
lookup and every peer connection (all at once, one thread each) are bounded by the connect
timeout; `import paddle` by the import timeout (its process group is killed then). A whole run
takes at most connect timeout x 2 + import timeout + the time to hash the config and spec.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import os
import shutil
import signal
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Optional

from typing_extensions import TypedDict

from tipcgen.errors import TipcError
from tipcgen.inputs import parse_json, read_head
from tipcgen.plan.builder import gpu_entry
from tipcgen.run.digest import bytes_digest, file_digest, short
from tipcgen.script.shellwords import ifs_split

VERDICTS = ("ok", "warn", "fail", "skip")
CHECK_NAMES = ("node", "launcher", "ports", "peers", "python", "topology", "prepare", "digest")
CONNECT_TIMEOUT = 3.0
IMPORT_TIMEOUT = 60.0
LAUNCH_DEFAULT_PORT = 6070  # paddle.distributed.launch's --start_port default
EXAMPLE_PORT = 17000  # what the generated docs export


@dataclass(frozen=True)
class Check:
    name: str
    verdict: str  # one of VERDICTS
    found: str
    fix: str = ""
    seconds: float = 0.0
    data: dict = field(default_factory=dict)  # machine-readable extras for --json

    def line(self) -> str:
        text = f"{self.verdict:<4} {self.name:<8} {self.found}"
        return text + (f"; fix: {self.fix}" if self.fix else "")


def exit_code(checks: Sequence[Check]) -> int:
    return 1 if any(c.verdict == "fail" for c in checks) else 0


# -- what the suite asks of this node ---------------------------------------------------------------


@dataclass(frozen=True)
class Launch:
    """The arguments a multi-node train step passes to paddle.distributed.launch."""

    ips: tuple[str, ...]
    host: Optional[str]
    start_port: Optional[str]  # the --start_port argument as written
    nproc: int


def launch_of(argv: Sequence[str]) -> Optional[Launch]:
    """The multi-node launch in a step's argv (`-m paddle.distributed.launch --k=v ... script`)."""
    argv = list(argv)
    try:
        at = argv.index("paddle.distributed.launch")
    except ValueError:
        return None
    args: dict[str, str] = {}
    for word in argv[at + 1 :]:
        if not word.startswith("--"):
            break
        key, _, value = word.partition("=")
        args[key] = value
    ips = tuple(ifs_split(args.get("--ips", ""), ","))
    if len(ips) < 2:
        return None
    devices = args.get("--gpus", args.get("--devices", ""))
    nproc = args.get("--nproc_per_node", "")
    count = int(nproc) if nproc.isdigit() else max(1, len(ifs_split(devices, ",")))
    return Launch(ips, args.get("--host"), args.get("--start_port"), count)


def plan_launches(plan) -> list[Launch]:
    """The distinct multi-node launches of a Plan's train steps, in order."""
    out: list[Launch] = []
    for step in plan.steps:
        launch = launch_of(step.argv or ()) if step.kind == "train" else None
        if launch is not None and launch not in out:
            out.append(launch)
    return out


def suite_ips(launches: Sequence[Launch]) -> list[str]:
    ips: list[str] = []
    for launch in launches:
        ips.extend(ip for ip in launch.ips if ip not in ips)
    return ips


def _no_multinode(name: str, mode: str) -> Check:
    return Check(name, "skip", f"no multi-node training in {mode} (no --ips in the plan's train steps)")


# -- 1. this node's address ------------------------------------------------------------------------


def can_bind(ip: str) -> bool:
    """An address this host owns: bind() to it succeeds (EADDRNOTAVAIL otherwise)."""
    try:
        family = socket.AF_INET6 if ":" in ip else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.bind((ip, 0))
        return True
    except (OSError, UnicodeError, ValueError):  # a name the resolver refuses (`..`) is not ours either
        return False


def host_addresses() -> list[str]:
    """The IPv4 address of each interface (for messages only; SIOCGIFADDR, no dependencies)."""
    out: list[str] = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for _index, name in socket.if_nameindex():
            try:
                packed = fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", name.encode()[:15]))
            except OSError:  # an interface without an IPv4 address
                continue
            out.append(socket.inet_ntoa(packed[20:24]))
    return out


def check_node(
    ips: Sequence[str],
    environ: Mapping[str, str],
    is_local: Callable[[str], bool] = can_bind,
    addresses: Callable[[], list[str]] = host_addresses,
) -> Check:
    """This node is one of the suite's IPs; TIPC_NODE_IP, when set, names a local one of them."""
    listed = ",".join(ips)
    local = [ip for ip in ips if is_local(ip)]
    node_ip = environ.get("TIPC_NODE_IP", "")
    data = {"ips": list(ips), "local": local, "node_ip": node_ip or None}
    if node_ip:
        if node_ip not in ips:
            fix = f"export TIPC_NODE_IP={local[0]}" if len(local) == 1 else f"set TIPC_NODE_IP to one of {listed}"
            return Check(
                "node", "fail", f"TIPC_NODE_IP={node_ip} is not one of the suite's IPs {listed}", fix, data=data
            )
        if node_ip not in local:
            return Check(
                "node", "fail", f"TIPC_NODE_IP={node_ip} is not an address of this host",
                "run on the node that owns it, or set TIPC_NODE_IP to this node's IP in gpu_list", data=data,
            )  # fmt: skip
        return Check("node", "ok", f"this node is {node_ip} (TIPC_NODE_IP), one of {listed}", data=data)
    if not local:
        mine = ", ".join(addresses()) or "none found"
        return Check(
            "node", "fail", f"none of the suite's IPs {listed} is an address of this host (its addresses: {mine})",
            "write this node's address into gpu_list (the same list on every node), or run on a listed node",
            data=data,
        )  # fmt: skip
    if len(local) == 1:
        return Check(
            "node", "warn", f"this node is {local[0]} of {listed}, but TIPC_NODE_IP is not set",
            f"export TIPC_NODE_IP={local[0]} (then nodes other than the first skip eval/export/inference "
            "instead of failing them, and CPU nodes pass it to the launcher as --host)", data=data,
        )  # fmt: skip
    return Check(
        "node", "warn", f"several of the suite's IPs are addresses of this host: {', '.join(local)}",
        f"export TIPC_NODE_IP=<the one this node plays>, e.g. TIPC_NODE_IP={local[0]}", data=data,
    )  # fmt: skip


def _bounded(func: Callable[[], str], timeout: float) -> Optional[str]:
    """func() in a daemon thread; None when it has not answered within `timeout` s."""
    box: list[str] = []
    thread = threading.Thread(target=lambda: box.append(func()), daemon=True)
    thread.start()
    thread.join(timeout)
    return box[0] if box else None


def launcher_guess() -> str:
    """The address paddle.distributed.launch takes for this node without --host or POD_IP."""
    try:
        return socket.gethostbyname(socket.getfqdn(socket.gethostname()))
    except (OSError, UnicodeError):
        return "127.0.0.1"


def check_launcher(
    launch: Launch, environ: Mapping[str, str], timeout: float, guess: Callable[[], str] = launcher_guess
) -> Check:
    """The launcher will know which of --ips this node is (else it takes rank 0 like the first)."""
    node_ip = environ.get("TIPC_NODE_IP", "")
    if environ.get("POD_IP"):
        seen, how = environ["POD_IP"], "POD_IP"
    elif launch.host:
        seen, how = launch.host, "--host"
    else:
        answer = _bounded(guess, timeout)
        if answer is None:
            return Check(
                "launcher", "warn", f"looking up this host's name took over {timeout:g} s",
                "export POD_IP=<this node's IP in gpu_list> so the launcher need not look it up",
            )  # fmt: skip
        seen, how = answer, "its host name's address"
    data = {"launcher_ip": seen, "from": how}
    if seen in launch.ips:
        return Check("launcher", "ok", f"the launcher will see this node as {seen} ({how})", data=data)
    first = node_ip == launch.ips[0]
    verdict = "warn" if first or not node_ip else "fail"
    found = f"the launcher will see this node as {seen} ({how}), which is not in --ips, so it takes rank 0"
    if first:
        found += " (right: this is the first node)"
    elif node_ip:
        found += " like the first node and training never starts"
    else:
        found += ": on any node but the first, training never starts"
    fix = f"export POD_IP={node_ip or '<this node IP in gpu_list>'} (the launcher's --host; or map the host name to it)"
    return Check("launcher", verdict, found, fix, data=data)


# -- 2. ports ----------------------------------------------------------------------------------------


def start_port(launch: Launch, environ: Mapping[str, str]) -> tuple[str, str]:
    """(the start port the launcher uses, where it comes from)."""
    if environ.get("PADDLE_START_PORT"):
        return environ["PADDLE_START_PORT"], "PADDLE_START_PORT"
    if launch.start_port:
        return launch.start_port, "FLAGS_START_PORT, passed as --start_port"
    if environ.get("FLAGS_START_PORT"):  # the generated runner exports it as PADDLE_START_PORT
        return environ["FLAGS_START_PORT"], "FLAGS_START_PORT, exported as PADDLE_START_PORT"
    return str(LAUNCH_DEFAULT_PORT), "the launcher's default"


def port_number(text: str) -> Optional[int]:
    """A TCP port (1-65535) written in ASCII digits (FLAGS_START_PORT, --start_port), else None."""
    if not (text.isascii() and text.isdigit() and len(text) <= 5):
        return None
    return int(text) if 0 < int(text) <= 65535 else None


def port_busy(ip: str, port: int) -> Optional[str]:
    """Why (ip, port) cannot be listened on, or None when it is free (TIME_WAIT does not count)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((ip, port))
            s.listen(1)
        return None
    except OSError as exc:
        if exc.errno == errno.EADDRNOTAVAIL:  # not in use: the address is not this host's
            return NOT_OURS + (exc.strerror or "")
        return exc.strerror or str(exc)
    except (UnicodeError, ValueError):  # TIPC_NODE_IP `..`: the resolver refuses the name
        return f"{ip!r} is not an address"


NOT_OURS = "not this host's address: "


def check_ports(
    launch: Launch, environ: Mapping[str, str], busy: Callable[[str, int], Optional[str]] = port_busy
) -> Check:
    """FLAGS_START_PORT is set, and the ports this node's processes will listen on are free."""
    flags = environ.get("FLAGS_START_PORT", "")
    port_text, source = start_port(launch, environ)
    if (port_number(port_text) or 65536) > 65536 - launch.nproc:
        return Check(
            "ports", "fail", f"start port {port_text!r} ({source}) is not a port number for {launch.nproc} process(es)",
            f"export FLAGS_START_PORT=<a free port, the same on every node>, e.g. {EXAMPLE_PORT}",
        )  # fmt: skip
    first = int(port_text)
    ports = list(range(first, first + launch.nproc))
    ip = environ.get("TIPC_NODE_IP") or ""
    taken = [(p, why) for p in ports if (why := busy(ip, p)) is not None]
    span = f"{ports[0]}" if len(ports) == 1 else f"{ports[0]}-{ports[-1]}"
    where = ip or "any address"
    data = {"start_port": first, "ports": ports, "source": source, "busy": [p for p, _ in taken]}
    foreign = [why for _, why in taken if why.startswith(NOT_OURS)]
    if foreign:
        return Check(
            "ports", "fail",
            f"TIPC_NODE_IP {ip} is not an address of this host ({foreign[0][len(NOT_OURS):]}): nothing can listen"
            f" on it, so its ports {span} cannot be checked",
            "export TIPC_NODE_IP=<this node's own address in gpu_list> (`ip -4 addr` lists them)", data=data,
        )  # fmt: skip
    if taken:
        p, why = taken[0]
        var = "FLAGS_START_PORT"
        if source == "PADDLE_START_PORT":
            var = "PADDLE_START_PORT (it overrides FLAGS_START_PORT)"
        return Check(
            "ports", "fail", f"port {p} on {where} is in use here ({why}); the launcher needs {span} ({source})",
            f"stop what listens there (`ss -ltnp`), or export another {var}, the same on every node",
            data=data,
        )  # fmt: skip
    if not flags:
        return Check(
            "ports", "warn",
            f"FLAGS_START_PORT is not set; the launcher will use {span} ({source}), free here; paddle's legacy "
            "launcher (fleetrun, paddle < 2.3) picks random ports on each node instead and the nodes wait for "
            "each other forever (stuck at 'Using network Socket')",
            f"export FLAGS_START_PORT={EXAMPLE_PORT if launch.start_port is None else first} on every node "
            "(the same value)", data=data,
        )  # fmt: skip
    note = "" if flags == port_text else f" (PADDLE_START_PORT overrides FLAGS_START_PORT={flags})"
    return Check("ports", "ok", f"port(s) {span} on {where} free here ({source}){note}", data=data)


# -- 3. peers ----------------------------------------------------------------------------------------


def probe(ip: str, port: int, timeout: float) -> str:
    """'open', 'refused', or why nothing answered ('timeout', 'no route to host', ...)."""
    try:
        with socket.create_connection((ip, port), timeout=timeout):
            return "open"
    except ConnectionRefusedError:
        return "refused"
    except socket.timeout:
        return "timeout"
    except OSError as exc:
        return exc.strerror or errno.errorcode.get(exc.errno or 0, str(exc))
    except (UnicodeError, ValueError):  # the resolver refuses the name (an empty label: `..`)
        return "not a host name"


def check_peers(
    launch: Launch,
    environ: Mapping[str, str],
    timeout: float,
    answer: Callable[[str, int, float], str] = probe,
) -> Check:
    """Every other node answers on its first port within `timeout` (all probed at once)."""
    port_text, _source = start_port(launch, environ)
    node_ip = environ.get("TIPC_NODE_IP", "")
    peers = [ip for ip in launch.ips if ip != node_ip]
    port = port_number(port_text)
    if port is None:
        return Check("peers", "skip", "no valid start port to probe (see ports)")
    results: dict[str, str] = {}
    threads = [
        threading.Thread(target=_probe_into, args=(results, answer, ip, port, timeout), daemon=True) for ip in peers
    ]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout + 1.0
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    status = {ip: results.get(ip, "timeout") for ip in peers}
    data = {"port": port, "peers": status}
    silent = [f"{ip} ({why})" for ip, why in status.items() if why not in ("open", "refused")]
    waiting = [ip for ip, why in status.items() if why == "refused"]
    if silent:
        return Check(
            "peers", "fail", f"no answer within {timeout:g} s from {', '.join(silent)} on port {port}",
            "check the peer is up, the IP in gpu_list is right and no firewall drops the port", data=data,
        )  # fmt: skip
    if waiting:
        return Check(
            "peers", "warn", f"{', '.join(waiting)} reachable but nothing listens on port {port} yet",
            "normal before the run: a node listens only once its launcher started; start every node's run", data=data,
        )  # fmt: skip
    return Check("peers", "ok", f"{', '.join(peers)} answer on port {port}", data=data)


def _probe_into(results: dict, answer: Callable[[str, int, float], str], ip: str, port: int, timeout: float) -> None:
    results[ip] = answer(ip, port, timeout)


# -- 4. python and paddle ---------------------------------------------------------------------------


class _ProbeAnswer(TypedDict):
    version: str
    cuda: bool
    devices: int


@dataclass(frozen=True)
class Paddle:
    version: str
    cuda: bool
    devices: int  # GPUs paddle sees under the caller's CUDA_VISIBLE_DEVICES


MARK = "TIPCGEN_DOCTOR "
PROBE = (
    "import json, paddle\n"
    "cuda = bool(paddle.is_compiled_with_cuda())\n"
    "n = paddle.device.cuda.device_count() if cuda else 0\n"
    f"print({MARK!r} + json.dumps(dict(version=paddle.__version__, cuda=cuda, devices=n)))\n"
)


def find_python(python: str, environ: Mapping[str, str], root: Path) -> Optional[str]:
    """The config's interpreter as bash would find it from the repo root (PATH, or a path)."""
    if "/" in python:
        path = Path(python) if os.path.isabs(python) else root / python
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    return shutil.which(python, path=environ.get("PATH", os.defpath))


def import_paddle(exe: str, environ: Mapping[str, str], root: Path, timeout: float) -> tuple[Optional[Paddle], str]:
    """(what paddle reports, '') or (None, why not): `import paddle` in a subprocess, bounded."""
    proc = subprocess.Popen(
        [exe, "-c", PROBE], cwd=root, env=dict(environ), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    kept: tuple[list, list] = ([], [])
    readers = [read_head(proc.stdout, kept[0]), read_head(proc.stderr, kept[1])]
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return None, f"`import paddle` did not finish within {timeout:g} s"
    for reader in readers:
        reader.join(5)  # a process the interpreter left behind may hold the pipes
    out, err = (b"".join(chunks).decode("utf-8", "replace") for chunks in kept)
    for line in out.splitlines():
        if line.startswith(MARK):
            try:  # the interpreter is the config's: its answer is parsed (bounded, typed), never trusted
                got = parse_json(line[len(MARK) :], exe, _ProbeAnswer, limit=4096)
                return Paddle(got["version"], got["cuda"], got["devices"]), ""
            except TipcError:
                return None, f"{exe} answered the probe with {line[:200]!r}, not what `import paddle` prints"
    lines = [line.strip() for line in err.splitlines() if line.strip()]
    if not lines:
        return None, f"exit status {proc.returncode}"
    # A traceback ends with the error; anything else (a wrapper such as a pyenv shim) starts with it.
    return None, lines[-1] if any(line.startswith("Traceback") for line in lines) else lines[0]


def check_python(python: str, exe: Optional[str], paddle: Optional[Paddle], why: str) -> Check:
    if exe is None:
        return Check(
            "python", "fail", f"the config's python {python!r} is not found (PATH, from the repo root)",
            "install it, or edit the config's `python:` line to an interpreter with paddle",
        )  # fmt: skip
    if paddle is None:
        return Check(
            "python", "fail", f"{exe} cannot import paddle: {why}",
            f"make it import paddle (`{exe} -m pip install paddlepaddle`, or paddlepaddle-gpu), or point the "
            "config's `python:` at an interpreter that does",
            data={"python": exe},
        )  # fmt: skip
    build = "CUDA" if paddle.cuda else "CPU"
    gpus = f", {paddle.devices} GPU(s) visible" if paddle.cuda else ""
    return Check(
        "python", "ok", f"{exe}: paddle {paddle.version}, {build} build{gpus}",
        data={"python": exe, "paddle": paddle.version, "cuda": paddle.cuda, "devices": paddle.devices},
    )  # fmt: skip


# -- 5. topology against the build and the devices -----------------------------------------------------


def _gpu_ids(gpus: str) -> list[int]:
    return [int(g) for g in ifs_split(gpus, ",") if g.isdigit()]


def check_topology(gpu_list: str, paddle: Optional[Paddle], environ: Mapping[str, str]) -> Check:
    """GPU ids need a CUDA build with enough visible devices; `cpuxN` on a GPU node is a waste."""
    if paddle is None:
        return Check("topology", "skip", "needs the python check's paddle")
    cvd = environ.get("CUDA_VISIBLE_DEVICES")
    visible = f" (CUDA_VISIBLE_DEVICES={cvd})" if cvd is not None else ""
    fails: list[str] = []
    warns: list[str] = []
    for entry in ifs_split(gpu_list, "|"):
        kind, _ips, gpus, _nodes = gpu_entry(entry)
        if kind in ("cpu_procs", "cpu_nodes"):
            if paddle.cuda and paddle.devices > 0:
                warns.append(f"{entry!r} trains on CPU processes although {paddle.devices} GPU(s) are here")
            continue
        if kind == "cpu":
            continue
        ids = _gpu_ids(gpus)
        if not paddle.cuda:
            fails.append(f"{entry!r} lists GPU ids but paddle {paddle.version} is a CPU build")
        elif ids and max(ids) >= paddle.devices:
            fails.append(f"{entry!r} needs GPU {max(ids)} but paddle sees {paddle.devices} GPU(s){visible}")
    if fails:
        fix = "install paddlepaddle-gpu, or use -1 / cpuxN entries in gpu_list on this node"
        if paddle.cuda:
            fix = "list only the GPUs this node has (nvidia-smi), or widen CUDA_VISIBLE_DEVICES"
        return Check("topology", "fail", "; ".join(fails), fix)
    if warns:
        return Check("topology", "warn", "; ".join(warns), "use GPU ids in gpu_list to train on the GPUs")
    return Check("topology", "ok", f"gpu_list {gpu_list} fits paddle {paddle.version} on this node{visible}")


# -- 6. prepare's artefacts ----------------------------------------------------------------------------


def check_prepare(steps: Optional[list], mode: str, root: Path, command: str) -> Check:
    """The mode's downloads and extractions have their stamps (`<to>/.tipcgen/<file>.stamp`)."""
    from tipcgen.emit.prepare import mode_steps
    from tipcgen.run.prepare.install import stamp_ok

    if steps is None:
        return Check("prepare", "skip", "a legacy config does not say what prepare fetches (give the spec)")
    flat = [s for s in mode_steps(steps) if s["kind"] in ("download", "extract")]
    if not flat:
        return Check("prepare", "ok", f"nothing to fetch or extract for {mode}")
    missing = []
    for s in flat:
        source = s["url"] if s["kind"] == "download" else s["archive"]
        # An extraction's stamp is trusted without hashing its archive again: this stays immediate.
        if not stamp_ok(root / s["to"], s["file"], source, s.get("sha256", "")):
            missing.append(f"{source} -> {s['to']}")
    data = {"artifacts": len(flat), "missing": missing}
    if missing:
        return Check(
            "prepare", "fail",
            f"{len(missing)} of {len(flat)} artefact(s) of {mode} not in place: {'; '.join(missing[:3])}"
            + (f" (and {len(missing) - 3} more)" if len(missing) > 3 else ""),
            f"run `{command}` first (from the model repo's root)", data=data,
        )  # fmt: skip
    return Check("prepare", "ok", f"all {len(flat)} artefact(s) of {mode} in place (stamps)", data=data)


# -- 7. digests ------------------------------------------------------------------------------------------


def check_digest(config_path: Optional[str], config_bytes: bytes, spec_path: Optional[str]) -> Check:
    """sha256 of the config (and spec): the same on every node means the same suite."""
    config = file_digest(config_path) if config_path else bytes_digest(config_bytes)
    parts = [f"config {short(config)}" + (f" ({config_path})" if config_path else " (as built from the spec)")]
    data = {"config": config}
    if spec_path:
        data["spec"] = file_digest(spec_path)
        parts.append(f"spec {short(data['spec'])} ({spec_path})")
    return Check("digest", "ok", ", ".join(parts) + "; compare with the other nodes (sha256sum)", data=data)


# -- the whole run ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """What doctor reads of a suite (cli/doctor.py fills it from a spec or a config)."""

    label: str
    mode: str
    plan: object  # the Plan for this node's environment
    python: str
    gpu_list: str
    config_bytes: bytes
    config_path: Optional[str] = None  # a legacy config file (None: a spec's suite)
    spec_path: Optional[str] = None
    prepare: Optional[list] = None  # the spec's steps for the mode; None for a bare config
    prepare_command: str = ""


@dataclass(frozen=True)
class Waits:
    connect: float = CONNECT_TIMEOUT
    imports: float = IMPORT_TIMEOUT


def _timed(run: Callable[[], Check]) -> Check:
    start = time.monotonic()
    check = run()
    return replace(check, seconds=round(time.monotonic() - start, 3))


def _network_checks(suite: Target, environ: Mapping[str, str], limits: Waits) -> dict[str, Callable[[], Check]]:
    launches = plan_launches(suite.plan)
    if not launches:
        return {name: functools.partial(_no_multinode, name, suite.mode) for name in CHECK_NAMES[:4]}
    first = launches[0]  # one IP list per suite in practice; every launch's ports are checked
    return {
        "node": lambda: check_node(suite_ips(launches), environ),
        "launcher": lambda: check_launcher(first, environ, limits.connect),
        "ports": lambda: _worst([check_ports(launch, environ) for launch in launches]),
        "peers": lambda: check_peers(first, environ, limits.connect),
    }


def _worst(checks: list[Check]) -> Check:
    order = {"fail": 0, "warn": 1, "ok": 2, "skip": 3}
    return min(checks, key=lambda c: order[c.verdict])


def run_checks(
    suite: Target, environ: Mapping[str, str], root: Path, limits: Waits = Waits(), skip: Sequence[str] = ()
) -> list[Check]:
    """Every check, in CHECK_NAMES order; a name in `skip` is not run and gives a skip line."""
    paddle: list[Optional[Paddle]] = [None]  # what the python check found, for the topology check

    def python() -> Check:
        exe = find_python(suite.python, environ, root)
        found, why = import_paddle(exe, environ, root, limits.imports) if exe else (None, "")
        paddle[0] = found
        return check_python(suite.python, exe, found, why)

    runs = _network_checks(suite, environ, limits)
    runs.update(
        python=python,
        topology=lambda: check_topology(suite.gpu_list, paddle[0], environ),
        prepare=lambda: check_prepare(suite.prepare, suite.mode, root, suite.prepare_command),
        digest=lambda: check_digest(suite.config_path, suite.config_bytes, suite.spec_path),
    )
    return [Check(name, "skip", "skipped (--skip)") if name in skip else _timed(runs[name]) for name in CHECK_NAMES]
