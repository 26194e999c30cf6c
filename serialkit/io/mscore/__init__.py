"""MuseScore files: the native reader (``read``), the native writers of annotated (``write``) and
repaired (``repitch``) files, and the MuseScore program run headless (``program``)."""
