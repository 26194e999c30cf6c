"""Blinded expert panels: packets of anonymised candidates with rating forms, and their analysis."""

from __future__ import annotations

from serialkit.panel.analyze import Rating, analyze, load_key, read_ratings
from serialkit.panel.build import build_packet

__all__ = ["Rating", "analyze", "build_packet", "load_key", "read_ratings"]
