"""Pure symbolic core: standard library only."""

from serialkit.core import catalog as _catalog  # noqa: F401  (registers catalogue row names with Row.parse)
