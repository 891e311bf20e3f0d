"""CLI commands for prepare: `tipcgen prepare` and `tipcgen hash` (registered on the main app)."""

from __future__ import annotations

from .cli import app  # noqa: F401
