"""What the runner refuses before it runs anything.

The generated bash refuses the same configs, with the same checks in common_func.sh
(tipc_check_bytes, tipc_check_log_names, tipc_check_matrix).
"""

from __future__ import annotations

import re

from tipcgen.errors import UsageError
from tipcgen.lower.configview import ConfigView
from tipcgen.script.shellwords import ifs_split

# Characters no command can hold: bash drops a NUL, exec() refuses it; other controls are garbage,
# and printed they drive the terminal: a CR sends the cursor back over a status line, C1 controls
# (U+0080-U+009F), line separators and bidirectional overrides (U+2028-U+202E, U+2066-U+2069)
# end or reorder a printed line. Tab and LF stay (common_func.sh's tipc_check_bytes: the same).
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028-\u202e\u2066-\u2069]")
# The real suites multiply to at most a few hundred; this keeps planning under a second or two.
MAX_MATRIX = 4096


def check_bytes(text: str, source: str = "config") -> None:
    """Refuse a config holding a NUL, a CR or another control character but tab and LF."""
    m = CONTROL.search(text)
    if m:
        line = text.count("\n", 0, m.start()) + 1
        if m.group() == "\r":
            raise UsageError(
                f"{source}: line {line}: a carriage return (CR): refusing this config (save it with LF line ends)"
            )
        what = "a NUL byte" if m.group() == "\x00" else f"control character {m.group()!r}"
        raise UsageError(f"{source}: line {line}: {what}: refusing this config (no command can hold it)")


def check_view(view: ConfigView, source: str = "config") -> None:
    """Refuse a config whose log files would land outside test_tipc/output/<model_name>/, or
    whose lists multiply into more than MAX_MATRIX combinations."""
    dialect = view.layout.dialect
    model_name = view.value("model_name")
    if "/" in model_name or model_name in (".", ".."):
        raise UsageError(
            f"{source}: model_name {model_name!r} would put logs outside test_tipc/output/ "
            "(it must be one plain name, without `/`)"
        )
    for role in dialect.log_name_roles:
        value = view.value(role)
        if "/" in value:
            shown = value if len(value) <= 60 else value[:57] + "..."
            raise UsageError(
                f"{source}: {role} (`{view.key(role)}:{shown}`) holds a `/`, but its items "
                f"name log files in test_tipc/output/{model_name}/"
            )
    size = matrix_size(view)
    if size > MAX_MATRIX:
        raise UsageError(
            f"{source}: its lists ({', '.join(dialect.matrix_roles)}) multiply to more "
            f"than {MAX_MATRIX} combinations; refusing a matrix that large"
        )


def matrix_size(view: ConfigView, cap: int = MAX_MATRIX) -> int:
    """The product of the config's `|` lists (the steps one mode plans), counted up to just past `cap`."""
    size = 1
    for role in view.layout.dialect.matrix_roles:
        size *= max(1, len(ifs_split(view.value(role), "|")))
        if size > cap:
            return size
    return size
