"""How `tipcgen fleet` reaches a node: one shell script run there, its stdout and stderr back
here. The engines (OpenSSH: `ssh.SshOptions`; Slurm: `slurm.SlurmTransport`) differ only in the
argv that carries a script to a node and in how they say it did not get through; the snippets
run on the nodes (`ssh.py`) and everything above them are shared."""

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

    def argv(self, host: str, script: str, stdin: bool = False) -> list[str]:
        """Run `script` (POSIX sh) on node `host`; its stdin is ours only when `stdin`."""
        ...

    def failure(self, host: str, code: Optional[int], err: str, bound: float) -> str:
        """One sentence for a command that did not get through (`code` None: no answer in `bound` s)."""
        ...
