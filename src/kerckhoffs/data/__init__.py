"""Describing, reading and encoding microdata: schema, hierarchies, the encoded table, I/O
and the bundled datasets."""
