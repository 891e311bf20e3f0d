"""What every command shares: the typer app, the one error handler, option checks, spec loading.

Exit codes: 0 ok, 1 a check/lint/run found something, 2 bad input (with a located message).
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
from collections.abc import Iterator, Mapping
from typing import Any, Optional

import typer

from tipcgen.errors import TipcError, UsageError


def echo(text: object = "", err: bool = False, nl: bool = True, json: bool = False) -> None:
    """The one way a command prints a line: through the terminal's escaper (tipcgen.escape), its
    newlines and tabs kept, so no name, value or log a line holds drives the terminal (ESC, CR,
    a bidi override). `json=True` for JSON text: its escapes are JSON's own (`\\uXXXX`).
    tests/test_escape.py fails when a command prints another way."""
    from tipcgen.escape import for_terminal

    typer.echo(for_terminal(text, lines=True, json=json), err=err, nl=nl)


def rich_text(text: object, lines: bool = False) -> str:
    """Text for a rich console or table: the terminal's escaper, then rich's markup escaped (a
    `[bold]` in a name is shown, not applied)."""
    from rich.markup import escape

    from tipcgen.escape import for_terminal

    return escape(for_terminal(text, lines=lines))


def _fail(exc: TipcError) -> None:
    from tipcgen.errors import (
        SpecError,
        printable,  # an input's name or text must not drive the terminal
    )

    # A SpecError's problems are one escaped line each; any other error is one line whatever
    # its text holds (a file name with a newline cannot forge a second message).
    text = str(exc) if isinstance(exc, SpecError) else printable(str(exc))
    echo(text, err=True)
    raise typer.Exit(exc.exit_code)


def _clean_errors(func):
    """Run a command; a TipcError, or an OSError naming a path (a file where a directory is
    wanted, /proc, a symlink loop, an unreadable file...), becomes one message and exit 2.
    An OSError naming no path is not the user's input: it keeps its traceback."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except TipcError as exc:
            _fail(exc)
        except OSError as exc:
            if exc.filename is None:
                raise
            from tipcgen.fsio import path_error

            _fail(path_error(exc))

    return wrapper


class _App(typer.Typer):
    def command(self, *args, **kwargs):
        register = super().command(*args, **kwargs)

        def decorator(func):
            _name_values(func)
            register(_clean_errors(func))
            return func

        return decorator


def _name_values(func) -> None:
    """Help shows `--out OUT` and `SPECS...`, not typer's `<str>` and `<list[str]>`: every option
    and argument without a metavar gets one from its name (flags take no value)."""
    import inspect

    from typer.models import ArgumentInfo, OptionInfo

    for name, param in inspect.signature(func).parameters.items():
        info, kind = param.default, str(param.annotation)
        if not isinstance(info, (OptionInfo, ArgumentInfo)) or info.metavar is not None or "bool" in kind:
            continue
        if isinstance(info, OptionInfo):
            longs = [d for d in info.param_decls or () if d.startswith("--")]
            name = longs[0][2:] if longs else name
        many = "list" in kind.lower() and isinstance(info, OptionInfo)  # typer adds an argument's "..."
        info.metavar = name.upper().replace("-", "_") + ("..." if many else "")


def _argument_type_from_metavar() -> None:
    """typer shows an argument as `NAME <type>` even when it has a metavar (an option's metavar
    replaces its type): with a metavar, show the name alone, as options do."""
    from typer.core import TyperArgument

    shown = TyperArgument.display_type_rich

    def display_type_rich(self, ctx):
        return None if self.metavar is not None else shown(self, ctx)

    TyperArgument.display_type_rich = display_type_rich  # type: ignore[method-assign]


_argument_type_from_metavar()


app = _App(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # plain help: rich formatting costs ~50 ms of start-up and a pre-commit hook should feel instant
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Compile typed TIPC specs into PaddlePaddle's legacy test suites.",
)


def _print_version(value: bool) -> None:
    if value:
        from tipcgen import __version__

        echo(__version__)
        raise typer.Exit()


@app.callback()
def _top(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_print_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Compile typed TIPC specs into PaddlePaddle's legacy test suites."""


# Bounds of the seconds options: a limit on a step or a run as long as a spec's `limits` may
# give one (spec/model.py MAX_SECONDS, about 115 days); a wait for something that normally takes
# seconds (a connection, `import paddle`, SIGTERM -> SIGKILL, another build's lock) at most 1 h.
MAX_LIMIT = 10_000_000
MAX_WAIT = 3600


def seconds(option: str, value: float, zero: bool = False, most: float = MAX_LIMIT) -> float:
    """A finite number of seconds (positive, or also 0 when `zero`) up to `most`, or a UsageError."""
    if not math.isfinite(value) or value < 0 or (value == 0 and not zero) or value > most:
        sign = "non-negative" if zero else "positive"
        raise UsageError(f"{option} must be a {sign} number of seconds, at most {_num(most)}, not {_num(value)}")
    return value


def _num(value: float) -> str:
    """10000001, not 1e+07; 1e+308 and 0.5 as they are."""
    return str(int(value)) if math.isfinite(value) and value == int(value) and abs(value) < 1e15 else f"{value:g}"


NO_SANDBOX_HELP = (
    "Run the repo's scripts for real, outside the sandbox (for machines where it cannot be made): they can"
    " then change, read and send whatever you can. Only for scripts you trust."
)


@contextlib.contextmanager
def scripts_sandbox(no_sandbox: bool) -> Iterator[None]:
    """Where a command runs a repo's own scripts: in the sandbox (refused, exit 2, naming why and
    --no-sandbox, when it cannot be made here), or for real with --no-sandbox, said on stderr."""
    from tipcgen import sandbox

    if not no_sandbox:
        sandbox.require()
        yield
        return
    echo("warning: --no-sandbox: the repo's scripts run for real, with your rights, files and network", err=True)
    with sandbox.unsandboxed():
        yield


def choice(option: str, value: str, allowed: tuple) -> str:
    """`value` when it is one of `allowed`, or a UsageError (never a silent default)."""
    if value not in allowed:
        which = " or ".join(allowed) if len(allowed) <= 2 else "one of " + ", ".join(allowed)
        raise UsageError(f"{option} must be {which}, not {value!r}")
    return value


def out_dir(option: str, value: str) -> str:
    if not value:
        raise UsageError(f"{option} must name a directory")
    return value


MODES_HELP = "lite_train_lite_infer | lite_train_whole_infer | whole_train_whole_infer | whole_infer"
SPECS_ARG = typer.Argument(..., help="Spec files or directories of specs.")
SOURCE_ARG = typer.Argument(..., help="A spec (with --suite) or a legacy config .txt.")
SUMMARY_OPT = typer.Option(
    None, "--summary", help="Write a markdown summary here (also appended to $GITHUB_STEP_SUMMARY when set)."
)
LANG_OPT = typer.Option("zh", "--lang", help="Docs language: zh (default) or en.")
SUITE_OPT = typer.Option(None, "--suite", help="Suite of a spec (default: the first).")
LAYOUT_OPT = typer.Option(None, "--layout", help="Dialect of a legacy config (default: detected).")
RUNNER_OPT = typer.Option(
    None, "--runner", help="Runner of the dialect to follow (default: the spec's, else the dialect's first)."
)
GPUID_OPT = typer.Option(None, "--gpuid", help="GPUID argument of the runner (whole_infer).")
DEVICE_OPT = typer.Option(
    "gpu",
    "--device",
    help="gpu (the runner; cpu runs come from the config's own lists) or npu | xpu: the run of the family's "
    "test_train_inference_python_<device>.sh (its config rewrites and runner word; the checkout is not edited).",
)


def mode_option(default: Any = ...) -> Any:  # typer options are typed Any, like typer.Option
    return typer.Option(default, "--mode", "-m", help=MODES_HELP)


def shell_word(word: str) -> str:
    """`word` quoted for bash so that pasting it gives back exactly `word` and runs nothing:
    shlex.quote (plain words stay bare), or $'...' with escapes when it holds a control character."""
    import shlex

    if word.isprintable():
        return shlex.quote(word)
    out = []
    for ch in word:
        code = ord(ch)
        if ch in "\\'":
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append(f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return "$'" + "".join(out) + "'"


def step_shell(step: Any, environ: Optional[Mapping[str, str]] = None) -> str:
    """A step as one shell line a user can paste: its directory, its CUDA_VISIBLE_DEVICES as it
    differs from the caller's environment, the argv that runs, each word quoted (nothing in a
    config value is expanded or run by the shell), and its log redirect."""
    from tipcgen.errors import printable

    env: Mapping[str, str] = os.environ if environ is None else environ
    if step.argv is None or not step.argv:
        why = "cannot split the command (a quote is not closed)" if step.argv is None else "empty command"
        return printable(f"# {why}: {step.command}")
    cvd = step.cuda_visible_devices
    prefix = ""
    if cvd is not None:
        prefix = f"CUDA_VISIBLE_DEVICES={shell_word(cvd)} "
    elif "CUDA_VISIBLE_DEVICES" in env:
        prefix = "env -u CUDA_VISIBLE_DEVICES "
    line = prefix + " ".join(map(shell_word, step.argv))
    if step.log:
        log = shell_word(step.log)
        line += f" 2>&1 | tee {log}" if step.output == "tee" else f" > {log} 2>&1"
    if step.cwd:
        line = f"(cd {shell_word(step.cwd)} && {line})"
    if step.skip:
        line += f"  # skipped: {step.skip}"
    return line


def plan_for(
    source: str, mode: str, suite: Any, layout: Any, gpuid: Any, runner: Any = None, device: str = "gpu"
) -> Any:
    """The Plan of `plan` and `run`: the caller's CUDA_VISIBLE_DEVICES, TIPC_NODE_IP and
    FLAGS_START_PORT are part of what the runner does; `device` npu/xpu: the device wrapper's run."""
    from tipcgen.check.source import plan_source
    from tipcgen.dialects.devices import DEVICES

    choice("--device", device, ("gpu", "cpu", *DEVICES))
    return plan_source(
        source,
        mode,
        suite=suite,
        layout=layout,
        gpuid=gpuid,
        runner=runner,
        root=os.getcwd(),
        cuda_visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"),
        node_ip=os.environ.get("TIPC_NODE_IP"),
        start_port=os.environ.get("FLAGS_START_PORT"),
        device=device if device in DEVICES else None,
    )
