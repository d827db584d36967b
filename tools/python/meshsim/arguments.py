"""The Python API's argument checks (no Gymnasium needed: replay uses them too). Each
takes a value as it is or refuses it naming the argument: a string is not a list, a bool
not a number, 1.9 not an integer; numpy's scalars are numbers like Python's."""
import math
import numbers
import os
from collections.abc import Mapping

import numpy as np


def merged_overrides(overrides, kw_overrides):
    """overrides={"rl.episode_s": 600} and rl__episode_s=600 as one dict; a key given both
    ways is refused (neither would say which wins)."""
    merged = {text("overrides key", key): value for key, value in mapping("overrides", overrides).items()}
    given = {key.replace("__", "."): key for key in merged}
    for key in kw_overrides:
        dotted = key.replace("__", ".")
        if dotted in given:
            raise ValueError(f"{dotted}: given twice, as overrides[{given[dotted]!r}] and as {key}=: give it once")
    merged.update(kw_overrides)
    return merged


def exact_int(name, value, low, high):
    """`value` when it is an integer (Python's or numpy's, not a bool) in [low, high]:
    1.5 or "8" are refused, never rounded or parsed."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected an integer, got {value!r} ({type(value).__name__})")
    if not low <= int(value) <= high:
        raise ValueError(f"{name}: expected an integer in [{low}, {high}], got {value}")
    return int(value)


def real(name, value, low=-math.inf, high=math.inf):
    """`value` as a float when it is a finite real number (not a bool, not a string) in [low, high]."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a number, got {value!r} ({type(value).__name__})")
    number = float(value)
    if not (math.isfinite(number) and low <= number <= high):
        raise ValueError(f"{name}: expected a finite number in [{low:g}, {high:g}], got {value!r}")
    return number


def reals(name, values, low=-math.inf, high=math.inf):
    """A list of real(...) numbers from a list, tuple or array: a string is not iterated
    ('10' is not [1, 0])."""
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{name}: expected a list of numbers, got {values!r} ({type(values).__name__})")
    return [real(f"{name}[{i}]", value, low, high) for i, value in enumerate(values)]


def path(name, value, required=False):
    """A path (a str or an os.PathLike) as a str, or None when not required: 5 is not the
    file named '5'."""
    if value is None and not required:
        return None
    if isinstance(value, (str, os.PathLike)):
        fspath = os.fspath(value)
        if isinstance(fspath, str):
            return fspath
    raise TypeError(f"{name}: expected a path (a str or os.PathLike), got {value!r} ({type(value).__name__})")


def flag(name, value):
    """True or False (numpy's too), never a truthy string: quiet='no' is not quiet."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{name}: expected True or False, got {value!r} ({type(value).__name__})")


def mapping(name, value):
    """A dict from a Mapping, {} from None: a list of pairs or a number is refused."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(f"{name}: expected a dict, got {value!r} ({type(value).__name__})")
    return dict(value)


def text(name, value):
    if not isinstance(value, str):
        raise TypeError(f"{name}: expected a string, got {value!r} ({type(value).__name__})")
    return value


def checked_action(action, size, choices, rows=1):
    """`action` as a native step takes it, refused (ValueError) unless the action space
    holds it: with `choices` (discrete), integers in [0, choices) (not bools, not 2.0, not
    NaN, not None); without (continuous), finite numbers (ones outside [-1, 1] are clipped
    to it by the environment). A wrong shape is left to the native step, which names both.
    One rule for env.step, VectorEnv.step (row by row) and meshsim.evaluate."""
    array = np.asarray(action)
    if array.size != rows * size:
        return array
    if choices:
        fits = array.dtype.kind in "iu" and bool(((array >= 0) & (array < choices)).all())
        expected = f"integers in [0, {choices - 1}]"
    else:
        fits = array.dtype.kind in "iuf" and bool(np.isfinite(array).all())
        expected = "finite numbers"
    if not fits:
        per = " per environment" if rows > 1 else ""
        raise ValueError(f"action: expected {size} {expected}{per}, got {array.tolist()!r}")
    return array
