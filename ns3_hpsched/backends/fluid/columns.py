"""Tables whose arrays the compiled loop takes as one named tuple: :class:`Columns`.

The fluid loop is entered some tens of thousands of times a run (once per decision, per
finished batch of flows, per allocation hook). Gathering the flow store's, the group
table's and the coflow meter's hundred arrays into their named tuples took 5.5 us an
entry (measured), so each table keeps its tuple and builds it again only after one of its
arrays was replaced (grown); arrays changed in place need nothing.
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

__all__ = ["Columns"]


class Columns:
    """Mix-in for a table whose attributes named by ``ARRAYS._fields`` are its arrays."""

    #: The named tuple the compiled loop takes (the subclass sets it).
    ARRAYS: ClassVar[type[NamedTuple]]

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name in self.ARRAYS._fields:
            self.__dict__.pop("_arrays", None)

    def arrays(self) -> NamedTuple:
        """The arrays, for the compiled loop (the same tuple until one is replaced)."""
        arrays = self.__dict__.get("_arrays")
        if arrays is None:
            arrays = self._arrays = self.ARRAYS(*(getattr(self, name) for name in self.ARRAYS._fields))
        return arrays
