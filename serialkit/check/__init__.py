"""The checking service: the gate every candidate goes through, the check report, annotation.

``check_piece`` builds the report ``serialkit check`` prints; ``annotate_score`` labels every note
of a score; the built-in predicates are registered by ``serialkit.plugins.builtins``.
"""

from __future__ import annotations

from serialkit.check.report import CheckReport, check_piece, require_row

__all__ = ["CheckReport", "check_piece", "require_row"]
