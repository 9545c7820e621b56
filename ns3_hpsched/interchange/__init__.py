"""Interchange with the field's formats (the HPCC simulator's topology, flow and fct files)."""
