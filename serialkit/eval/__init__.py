"""serialkit.eval."""
