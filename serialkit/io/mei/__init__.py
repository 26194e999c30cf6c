"""MEI: reading (``read``, with the definitions walk in ``defs``), writing (``write``), annotating
a source in place (``annotate``) and the engraving-faithful MEI → MusicXML converter (``convert``)."""
