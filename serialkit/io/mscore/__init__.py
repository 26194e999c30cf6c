"""MuseScore files: the native reader (``read``) and the MuseScore program run headless (``program``)."""
