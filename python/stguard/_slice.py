"""get_slice's indexing: numpy's basic indexing (ints, slices with any step, negative indexes,
``...``, ``None``, ``True``/``False``), applied as numpy applies it.

Only the rows of the first dimension that the index touches are read (one bounded range through
the safe copying path); the index, with its first-dimension item moved onto those rows, is then
applied by numpy itself to the rows read, so the result is numpy's by construction. Index checks
(out-of-range integers, too many indexes, two ellipses) are numpy's too: the index is first
applied to a zero-strided stand-in of the full shape, which costs no memory."""

from __future__ import annotations

import operator
from typing import Any, List, Optional, Tuple


def _is_bool(item: Any) -> bool:
    if isinstance(item, bool):
        return True
    try:
        import numpy

        return isinstance(item, numpy.bool_)
    except ImportError:  # pragma: no cover - numpy is a dependency of slicing
        return False


def _as_int(v: Any) -> Optional[int]:
    """An integer index (int, numpy integer, 0-d integer array) or None when v is not one."""
    if _is_bool(v) or getattr(v, "ndim", 0) != 0:
        return None
    try:
        return operator.index(v)
    except TypeError:
        return None


def _normalize(item: Any) -> Any:
    """One index item as numpy's basic indexing takes it; anything else raises IndexError, as
    numpy does for a float, and for arrays and lists (advanced indexing, not offered here)."""
    if item is None or item is Ellipsis:
        return item
    if _is_bool(item):
        return bool(item)
    if isinstance(item, slice):
        parts = []
        for p in (item.start, item.stop, item.step):
            q = None if p is None else _as_int(p)
            if p is not None and q is None:
                raise TypeError("slice indices must be integers or None")
            parts.append(q)
        return slice(*parts)
    i = _as_int(item)
    if i is not None:
        return i
    raise IndexError(
        "get_slice takes numpy's basic indexes (integers, slices, ..., None, True/False); "
        f"{type(item).__name__} is not one (index arrays and lists are advanced indexing)"
    )


def normalize_key(key: Any) -> Tuple[Any, ...]:
    items = key if isinstance(key, tuple) else (key,)
    return tuple(_normalize(i) for i in items)


def _consumes_dim(item: Any) -> bool:
    return isinstance(item, (int, slice)) and not isinstance(item, bool)


def check_key(items: Tuple[Any, ...], shape: Tuple[int, ...]) -> None:
    """Raises numpy's IndexError for an index numpy refuses on this shape. Bool scalars add an
    axis and consume none, as None does, so they are None for this check (a bool is advanced
    indexing to numpy, which would copy the stand-in)."""
    import numpy

    stand_in = numpy.broadcast_to(numpy.zeros((), dtype=numpy.uint8), shape)
    stand_in[tuple(None if _is_bool(i) else i for i in items)]


def first_dim_item(items: Tuple[Any, ...], rank: int) -> Optional[int]:
    """Position in items of the index applied to dimension 0, or None when dimension 0 is taken
    whole (covered by the ellipsis, or by no index at all)."""
    consuming = sum(1 for i in items if _consumes_dim(i))
    for pos, item in enumerate(items):
        if item is Ellipsis:
            if consuming < rank:
                return None  # dimension 0 is inside the ellipsis
            continue  # an empty ellipsis
        if _consumes_dim(item):
            return pos
    return None


def rows_for(item: Any, rows: int) -> Tuple[int, int, Any]:
    """(first row, end row, the item rebased onto rows [first, end)) for a valid item."""
    if isinstance(item, int):
        index = item + rows if item < 0 else item
        return index, index + 1, 0
    start, stop, step = item.indices(rows)
    r = range(start, stop, step)
    if len(r) == 0:
        return 0, 0, slice(0, 0)
    lo, hi = min(r[0], r[-1]), max(r[0], r[-1]) + 1
    # a stop before row lo means "past the beginning": None, since a negative stop would count
    # from the end
    return lo, hi, slice(start - lo, stop - lo if stop - lo >= 0 else None, step)


def plan(key: Any, shape: Tuple[int, ...]) -> Tuple[int, int, Tuple[Any, ...]]:
    """(first row, end row, index to apply to those rows) for get_slice(name)[key]."""
    items = normalize_key(key)
    check_key(items, shape)
    rank = len(shape)
    pos = first_dim_item(items, rank) if rank > 0 else None
    if rank == 0:
        return 0, 1, items
    if pos is None:
        return 0, shape[0], items
    lo, hi, rebased = rows_for(items[pos], shape[0])
    out: List[Any] = list(items)
    out[pos] = rebased
    return lo, hi, tuple(out)
