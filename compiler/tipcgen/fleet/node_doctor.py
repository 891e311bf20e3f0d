"""`tipcgen doctor`'s checks that matter to a run, on every node before anything starts, without
tipcgen on the nodes: a few lines of stdlib Python, run by the config's own interpreter in the
environment the run will have, answer one JSON line; the verdicts come from `run/doctor.py`'s
check functions here, with the node's answers as their probes.

What is checked per node: the interpreter is on its PATH and finds `paddle` (no import: that
takes seconds; a broken install still fails at the first step); the node's address in gpu_list
is its own (bind); the address paddle's launcher will take for it (`POD_IP`, `--host`, else
`gethostbyname(getfqdn(gethostname()))`) is in `--ips`, else it takes rank 0 and the nodes wait
for each other until a timeout; the ports its processes will listen on are free.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

from tipcgen.errors import TipcError
from tipcgen.fleet.ssh import MARK, env_words
from tipcgen.inputs import parse_json
from tipcgen.plan.steps import Plan
from tipcgen.run.doctor import check_launcher, check_ports, plan_launches, port_number, start_port

# argv: the node's address, then the ports to try. Runs on python >= 3.4 (the oldest TIPC
# configs name python3.7); never imports paddle.
PROBE = r"""
import errno, json, socket, sys
ip, ports = sys.argv[1], [int(p) for p in sys.argv[2:]]
out = {"python": sys.version.split()[0]}
try:
    import importlib.util
    spec = importlib.util.find_spec("paddle")
    out["paddle"] = None if spec is None else (spec.origin or "?")
except Exception as exc:
    out["paddle"] = None
    out["paddle_error"] = str(exc)[:200]
try:
    name = socket.gethostname()
    out["hostname"] = name
    out["launcher_ip"] = socket.gethostbyname(socket.getfqdn(name))
except Exception as exc:
    out["launcher_ip"] = "127.0.0.1"
    out["resolve_error"] = str(exc)[:200]
def bind(port, listen):
    s = socket.socket(socket.AF_INET6 if ":" in ip else socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((ip, port))
        if listen:
            s.listen(1)
        return None
    except Exception as exc:
        if getattr(exc, "errno", None) == errno.EADDRNOTAVAIL:
            return "EADDRNOTAVAIL"
        return getattr(exc, "strerror", None) or str(exc)[:200]
    finally:
        s.close()
out["own"] = bind(0, False)
out["busy"] = dict((str(p), bind(p, True)) for p in ports)
print("__MARK__ doctor " + json.dumps(out))
"""


@dataclass(frozen=True)
class Probe:
    """What a node's check asks its interpreter."""

    python: str  # the config's interpreter, as the steps name it
    ip: str  # the node's address in gpu_list
    ports: tuple  # the ports its launcher processes will listen on
    env: tuple  # (NAME, VALUE): the run's environment on that node


def python_of(plan: Plan) -> Optional[str]:
    """The interpreter the Plan's steps run (the config's `python` line)."""
    for step in plan.steps:
        if step.argv:
            return str(step.argv[0])
    return None


def _environ(env: Sequence[tuple]) -> dict:
    return {k: v for k, v in env}


def probe_for(plan: Plan, ip: str, env: Sequence[tuple]) -> Optional[Probe]:
    python = python_of(plan)
    if python is None:
        return None
    ports: list[int] = []
    for launch in plan_launches(plan):
        first = port_number(start_port(launch, _environ(env))[0])
        if first is not None:
            ports += [p for p in range(first, min(first + launch.nproc, 65536)) if p not in ports]
    return Probe(python, ip, tuple(ports), tuple(env))


def probe_script(probe: Probe) -> str:
    """Shell lines printing `MARK doctor {json}`, or `MARK nopython` when the interpreter is not
    on the run's PATH there."""
    code = PROBE.replace("__MARK__", MARK)
    py = shlex.quote(probe.python)
    env = env_words(probe.env)
    args = " ".join(shlex.quote(str(a)) for a in (probe.ip, *probe.ports))
    lookup = f"env {env} sh -c 'command -v \"$1\"' sh {py}" if env else f"command -v {py}"
    return (
        f"if {lookup} >/dev/null 2>&1; then env {env} {py} -c {shlex.quote(code)} {args} 2>&1 | "
        f"grep -F {shlex.quote(MARK + ' doctor ')} || echo {shlex.quote(MARK + ' doctor-failed')}; "
        f"else echo {shlex.quote(MARK + ' nopython')}; fi"
    )


def verdicts(node_ip: str, plan: Plan, probe: Probe, words: Optional[list], timeout: float) -> list[str]:
    """Problems (each naming the node and the fix) from the node's answer: `words` is the marker
    line's words after MARK (None: the node printed none)."""
    where = f"node {node_ip}"
    if words == ["nopython"]:
        return [
            f"{where}: the config's interpreter {probe.python!r} is not on the run's PATH there; install it "
            "or pass --env PATH=... with its directory"
        ]
    if words is None or words[:1] != ["doctor"] or len(words) < 2:
        return [
            f"{where}: {probe.python} -c '<the check>' gave no answer (is it a Python 3 interpreter?); "
            "run `tipcgen doctor` on that node"
        ]
    try:  # the node's answer is parsed bounded and typed, never trusted
        answer = parse_json(" ".join(words[1:]), where, dict, limit=1 << 16)
    except TipcError:
        return [f"{where}: its answer to the check is not what tipcgen wrote; a login script printing lines?"]
    problems = []
    if not answer.get("paddle"):
        problems.append(
            f"{where}: {probe.python} (Python {answer.get('python', '?')}) finds no `paddle` module; install "
            "paddlepaddle-gpu (or paddlepaddle for CPU) for that interpreter there"
        )
    own = answer.get("own")
    if own:
        problems.append(
            f"{where}: {node_ip} is not an address of that node ({own}); put the node's own address in "
            "gpu_list (`ip -4 addr` there lists them)"
        )
    environ = {**_environ(probe.env), "TIPC_NODE_IP": node_ip}
    raw = answer.get("busy")
    busy: dict = raw if isinstance(raw, dict) else {}
    guess = str(answer.get("launcher_ip") or "127.0.0.1")
    for launch in plan_launches(plan):
        launcher = check_launcher(launch, environ, timeout, guess=lambda: guess)
        if launcher.verdict == "fail":
            name = answer.get("hostname", "?")
            problems.append(
                f"{where}: paddle's launcher there resolves its host name {name!r} to {guess}, not to "
                f"{node_ip}: it would take rank 0 like the first node and both would wait until a timeout; "
                f"fix: map {name} to {node_ip} in that node's /etc/hosts (or DNS), or export POD_IP={node_ip} there"
            )
        if not own:
            ports = check_ports(launch, environ, busy=lambda ip, p: busy.get(str(p)))
            if ports.verdict == "fail":  # the fleet sets the port variables itself: its option moves them
                problems.append(
                    f"{where}: {ports.found}; fix: stop what listens there (`ss -ltnp` on that node), or pick "
                    "another --start-port (the fleet exports it as FLAGS_START_PORT and PADDLE_START_PORT on every "
                    "node)"
                )
    return problems
