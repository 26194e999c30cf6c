"""serialkit.harness."""
