"""serialkit.panel."""
