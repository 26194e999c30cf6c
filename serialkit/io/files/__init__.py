"""File safety: size limits and safe XML/ZIP parsing (``safety``), atomic writes (``atomic``) and
checked output paths and run directories (``outputs``)."""
