"""CLI command `tipcgen run`: execute a Plan (registered on the main app)."""

from __future__ import annotations

from .cli import app  # noqa: F401
