"""The Python API's argument checks (no Gymnasium needed: replay uses them too)."""
import numbers


def merged_overrides(overrides, kw_overrides):
    """overrides={"rl.episode_s": 600} and rl__episode_s=600 as one dict; a key given both
    ways is refused (neither would say which wins)."""
    merged = dict(overrides or {})
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
