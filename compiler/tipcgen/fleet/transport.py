"""How `tipcgen fleet` reaches a node: one shell script run there, its stdout and stderr back
here, and how a run started there is stopped. The engines (OpenSSH: `ssh.SshOptions`; Slurm:
`slurm.SlurmTransport`) differ in the argv that carries a script to a node, in how they say it
did not get through, and in how they stop a run: over ssh, the run's own session and every
process carrying its token, by a stop script under a shell named explicitly; on Slurm, the
run's own job step, signalled and cancelled through Slurm (`scancel`), never a `kill` line
(the step's first process, a subreaper, keeps orphaned trainers inside the step: slurm.KEEPER_PY).

`stop` is the only way a run is stopped: every exit path of `session.run_everywhere` (a node
failing, the run bound, SIGINT, SIGTERM, an exception) goes through it (tests/test_fleet_stop.py)."""

from __future__ import annotations

from typing import Optional, Protocol


class Transport(Protocol):
    @property
    def name(self) -> str:
        """The engine, for messages ("ssh", "slurm")."""
        ...

    @property
    def connect_timeout(self) -> float:
        """Seconds to reach a node; every check is bounded by it plus a slack."""
        ...

    def argv(self, host: str, script: str, stdin: bool = False, run: Optional[str] = None) -> list[str]:
        """Run `script` (POSIX sh) on node `host`; its stdin is ours only when `stdin`. `run`:
        the token of a run that `stop` may later be asked to stop."""
        ...

    def failure(self, host: str, code: Optional[int], err: str, bound: float) -> str:
        """One sentence for a command that did not get through (`code` None: no answer in `bound` s)."""
        ...

    def stop(self, host: str, directory: str, run: str, grace: float) -> Optional[str]:
        """Stop run `run` on `host`: SIGTERM to every process of it, SIGKILL to what is left
        after `grace` s. None once none is left; else one sentence saying why it failed."""
        ...
