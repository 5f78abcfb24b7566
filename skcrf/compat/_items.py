"""python-crfsuite's rules for turning an item (one token's features) into
CRFsuite attributes, for code written for python-crfsuite and sklearn-crfsuite.

An item is a dict or any other iterable:

* an iterable of keys (``["walk", "shop"]``): each key is an attribute of
  value 1.0;
* a dict: ``{key: number}`` or ``{key: bool}`` is the attribute ``key`` with
  that value (True is 1.0, False 0.0); ``{key: str}`` or ``{key: bytes}`` is
  the attribute ``key:value`` of value 1.0; ``{key: dict / list / set}`` is
  the nested item's attributes with ``key:`` in front of each.

Keys and values given as ``bytes`` are UTF-8 (other bytes are kept through
``surrogateescape``, so no two distinct byte strings become one attribute).
The same attribute twice in one item adds its values, as CRFsuite does.
Pure Python.
"""

from numbers import Number

__all__ = ["item_attributes", "needs_flattening"]

_SEP = ":"


def _text(s):
    if isinstance(s, bytes):
        return s.decode("utf-8", "surrogateescape")
    if isinstance(s, str):
        return s
    raise TypeError(f"an attribute name must be str or bytes, got {type(s).__name__} "
                    f"{s!r}.")


def item_attributes(item, prefix=""):
    """``{attribute: value}`` of one item under python-crfsuite's rules."""
    out = {}
    if isinstance(item, dict):
        for key, value in item.items():
            name = prefix + _text(key)
            if isinstance(value, (dict, list, set, tuple, frozenset)):
                for attr, v in item_attributes(value, name + _SEP).items():
                    out[attr] = out.get(attr, 0.0) + v
                continue
            if isinstance(value, (str, bytes)):
                attr, v = name + _SEP + _text(value), 1.0
            elif isinstance(value, Number) and not isinstance(value, complex):
                attr, v = name, float(value)
            else:
                raise TypeError(f"the value of {name!r} is {type(value).__name__} "
                                f"{value!r}: a value is a number, a bool, a str, bytes, or "
                                "a nested dict / list / set.")
            out[attr] = out.get(attr, 0.0) + v
        return out
    if isinstance(item, (str, bytes)):
        raise TypeError(f"an item is a dict or a list of attribute names, got a "
                        f"{type(item).__name__} {item!r}.")
    try:
        keys = iter(item)
    except TypeError:
        raise TypeError(f"an item is a dict or a list of attribute names, got "
                        f"{type(item).__name__} {item!r}.") from None
    for key in keys:
        attr = prefix + _text(key)
        out[attr] = out.get(attr, 0.0) + 1.0
    return out


def needs_flattening(item):
    """Whether ``item`` is anything but a flat dict of str keys to str,
    number or bool values (which skcrf's vectorizer reads directly)."""
    if not isinstance(item, dict):
        return True
    for key, value in item.items():
        if key.__class__ is not str or value.__class__ not in (str, float, int, bool):
            return True
    return False
