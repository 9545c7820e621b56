"""Simulation backends behind one interface (base.py): packet (ns-3) and fluid (flow level)."""
