"""Every free-text field of a session item redacted, as the store takes it in.

Source adapters redact an item's text (`content`, `input`, `output`, `text`), where nearly all
of the cost is. The other string fields (tool ids and names, `model`, `subtype`, `segment_id`,
plan entries' `status` and `priority`, an error's `message`...) come from the same records and
are just as able to carry a secret, so the store's one write path runs this on each item before
it is stored, published, traced or journaled. Fields typed as a `Literal` cannot hold anything
but their few values and are left alone.
"""

from __future__ import annotations

from functools import cache
from typing import Any, get_args, get_origin

from pydantic import BaseModel

from sidemirror.core.models import TRUNCATED_FIELDS
from sidemirror.core.redact import redact_text

# The text fields adapters redact themselves (the long ones); `id` is assigned by the store.
_ADAPTER_REDACTED = {kind: text for kind, (text, _) in TRUNCATED_FIELDS.items()}
_ADAPTER_REDACTED["assistant_delta"] = "text"


class RedactedText:
    """A `str | None` attribute redacted whenever it is set, whoever sets it (`title =
    RedactedText()`; the value is kept in `_redacted_title`, which a slotted class declares). A
    descriptor costs only the fields that use it; a `__setattr__` override would run on every
    field of every object made."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.attribute = "_redacted_" + name

    def __get__(self, obj: object | None, owner: type | None = None) -> str | None:
        if obj is None:
            return None  # the class asks: the field's default
        value: str | None = getattr(obj, self.attribute, None)
        return value

    def __set__(self, obj: object, value: str | None) -> None:
        setattr(obj, self.attribute, redact_text(value) if isinstance(value, str) else value)


def redact_item_fields(item: BaseModel) -> None:
    """Redact, in place, every free-text field of `item` its adapter did not already redact."""
    skip = _ADAPTER_REDACTED.get(str(getattr(item, "type", "")))
    texts, nested = _fields(type(item))
    for name in texts:
        if name == skip:
            continue
        value = getattr(item, name)
        if value:
            redacted = redact_text(value)
            if redacted != value:
                setattr(item, name, redacted)
    for name in nested:
        for entry in getattr(item, name):
            redact_item_fields(entry)


@cache
def _fields(model: type[BaseModel]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The model's free-text fields (`str`, `str | None`), and its lists of models."""
    texts: list[str] = []
    nested: list[str] = []
    for name, info in model.model_fields.items():
        annotation: Any = info.annotation
        if name == "id":
            continue
        if annotation in (str, str | None):
            texts.append(name)
        elif get_origin(annotation) is list and _is_model(get_args(annotation)[0]):
            nested.append(name)
    return tuple(texts), tuple(nested)


def _is_model(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)
