"""MusicXML: reading (``read``, walking the tree in ``walk``), writing (``write``), annotating a
source in place (``annotate``), schema validation (``validate``) and instrument declarations."""
