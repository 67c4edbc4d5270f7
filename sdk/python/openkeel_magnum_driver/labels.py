"""Label readers with the messages of the Rust SDK: a bad value raises
:class:`LabelError`, which a call answers as 400 ``Invalid``."""

_TRUE = ("true", "t", "yes", "y", "on", "1")
_FALSE = ("false", "f", "no", "n", "off", "0")


class LabelError(ValueError):
    """A label the driver refuses; its text is the 400's message."""


def _quoted(v):
    return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'


class Labels:
    """A label map (``labels``, ``node_labels``) read from a row's list of
    pairs (a repeated key keeps its last value), or from a dict."""

    def __init__(self, pairs=None):
        if pairs is None:
            self._m = {}
        elif isinstance(pairs, dict):
            self._m = dict(pairs)
        else:
            self._m = {k: v for k, v in pairs}

    def pairs(self):
        """The labels as the contract carries them: pairs in key order."""
        return sorted(self._m.items())

    def get(self, key, default=None):
        return self._m.get(key, default)

    def __contains__(self, key):
        return key in self._m

    def __len__(self):
        return len(self._m)

    def required(self, key):
        v = self._m.get(key)
        if v is None or not v.strip():
            raise LabelError(f"Label {key} is required by this driver.")
        return v

    def bool(self, key, default):
        v = self._m.get(key)
        if v is None:
            return default
        t = v.strip().lower()
        if t in _TRUE:
            return True
        if t in _FALSE:
            return False
        raise LabelError(f"Label {key} has an invalid boolean value {_quoted(v)}.")

    def int(self, key, default):
        v = self._m.get(key)
        if v is None or not v.strip():
            return default
        t = v.strip()
        body = t[1:] if t[:1] in "+-" else t
        if not body.isascii() or not body.isdigit():
            raise LabelError(f"Label {key} has an invalid integer value {_quoted(v)}.")
        n = int(t)
        if n < -(2**63) or n >= 2**63:
            raise LabelError(f"Label {key} has an invalid integer value {_quoted(v)}.")
        return n

    def int_in(self, key, default, lo, hi):
        n = self.int(key, default)
        if n < lo or n > hi:
            raise LabelError(f"Label {key} must be between {lo} and {hi}, not {n}.")
        return n

    def one_of(self, key, allowed, default):
        v = self._m.get(key)
        if v is None:
            return default
        if v in allowed:
            return v
        raise LabelError(
            f"Label {key} has an invalid value {_quoted(v)}: expected one of {', '.join(allowed)}."
        )

    def list(self, key):
        v = self._m.get(key)
        if v is None:
            return []
        return [s.strip() for s in v.split(",") if s.strip()]

    def lists(self, key, item):
        return item in self.list(key)
