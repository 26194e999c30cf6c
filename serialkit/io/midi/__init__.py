"""Standard MIDI Files: reading (``read``) and writing (``write``)."""
