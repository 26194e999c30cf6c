"""Adapters between files and the core piece model."""
