"""Ranges: consecutive ``(start, stop)`` pairs held as their stops alone.

A list of 100,000 pairs holds 100,000 tuples and their ints (9 MB); the stops in an
``array`` take 8 bytes a pair, and the pairs are made as they are read. The units of a
message list (``context._units``) and the messages of each native of a conversion
(``context.formats._conversion``) are both such ranges.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from itertools import chain
from typing import overload

__all__ = ["Ranges"]


class Ranges(Sequence[tuple[int, int]]):
    """``(start, stop)`` of each range, in order: the first starts at 0, each next one where
    the one before stops; ``what`` names a range in an index error."""

    __slots__ = ("stops", "what")

    def __init__(self, stops: array[int], what: str = "range") -> None:
        self.stops = stops
        self.what = what

    def __len__(self) -> int:
        return len(self.stops)

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return zip(chain((0,), self.stops), self.stops, strict=False)  # one start more

    @overload
    def __getitem__(self, k: int) -> tuple[int, int]: ...

    @overload
    def __getitem__(self, k: slice) -> list[tuple[int, int]]: ...

    def __getitem__(self, k: int | slice) -> tuple[int, int] | list[tuple[int, int]]:
        if isinstance(k, slice):
            return list(self)[k]
        n = len(self.stops)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError(f"{self.what} index out of range")
        return (self.stops[k - 1] if k else 0, self.stops[k])
