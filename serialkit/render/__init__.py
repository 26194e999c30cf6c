"""serialkit.render."""
