"""Pure symbolic core: standard library only."""
