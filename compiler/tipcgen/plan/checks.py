"""What the runner refuses before it runs anything.

The generated bash refuses the same configs, with the same checks in common_func.sh
(tipc_check_bytes, tipc_check_log_names, tipc_check_matrix).
"""

from __future__ import annotations

import re

from tipcgen.errors import UsageError
from tipcgen.legacy.configview import ConfigView
from tipcgen.legacy.shellwords import ifs_split

# Bytes no command can hold: bash drops a NUL, exec() refuses it; other controls are garbage.
CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# The real suites multiply to at most a few hundred; this keeps planning under a second or two.
MAX_MATRIX = 4096


def check_bytes(text: str, source: str = "config") -> None:
    """Refuse a config holding a NUL or a control character other than tab, CR and LF."""
    m = CONTROL.search(text)
    if m:
        line = text.count("\n", 0, m.start()) + 1
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
    size = 1
    for role in dialect.matrix_roles:
        size *= max(1, len(ifs_split(view.value(role), "|")))
        if size > MAX_MATRIX:
            raise UsageError(
                f"{source}: its lists ({', '.join(dialect.matrix_roles)}) multiply to more "
                f"than {MAX_MATRIX} combinations; refusing a matrix that large"
            )
