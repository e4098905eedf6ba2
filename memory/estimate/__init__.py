"""Footprint per phase from file headers: `headers` reads files, `families` is the family table, `formula` computes each phase."""
