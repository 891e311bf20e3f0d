"""Booleans as the scripts compare them: switch lines, YAML 1.1 spellings, near misses (`Fasle`)."""

from __future__ import annotations

import difflib
import functools
import re
from typing import Optional

BOOLISH = re.compile(r"^[A-Za-z]{4,5}$")
# YAML 1.1 spellings of booleans: YAML 1.2 (what specs are read as) keeps them as text, and the
# scripts compare with True/False exactly.
YAML11_BOOL = {"yes": "True", "y": "True", "on": "True", "no": "False", "n": "False", "off": "False"}
# Lines whose values are switches the scripts compare with True/False (or gpu/cpu).
SWITCH_ROLES = {
    "train.device",
    "inference.use_gpu",
    "inference.mkldnn",
    "inference.tensorrt",
    "inference.benchmark",
    "whole_infer.quant",
}


@functools.lru_cache(maxsize=4096)
def near_boolean(token: str) -> list:
    """[True or False] when `token` looks like a misspelling of one (memoized: configs repeat values)."""
    return difflib.get_close_matches(token, ["True", "False"], n=1, cutoff=0.6)


def fixed_booleans(value: str, role: Optional[str]) -> str:
    """`value` with every token _bool_typos reports replaced by the boolean it means."""

    def fix(m: re.Match) -> str:
        token = m.group(0)
        if role in SWITCH_ROLES and token.lower() in YAML11_BOOL:
            return YAML11_BOOL[token.lower()]
        if (
            BOOLISH.match(token)
            and token not in ("True", "False", "true", "false")
            and token.lower() not in ("none", "null")
        ):
            close = near_boolean(token)
            if close:
                return close[0]
        return token

    return re.sub(r"[^|,]+", fix, value)
