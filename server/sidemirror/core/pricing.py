"""Token prices and cost estimates from the dated table shipped in ``data/pricing.json``.

A model that is not in the table gives no cost (``None``), never a guess. The
name matching below therefore only removes decorations that never change the price
(provider prefixes, snapshot dates, Bedrock/Vertex version tags) and refuses anything that
could name a different model: "claude-opus-4-6" is not "claude-opus-4", "gpt-5-nano" is
not "gpt-5".
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass
from importlib import resources

_TOKENS_PER_UNIT = 1_000_000  # table prices are USD per million tokens
_FIELDS = ("input", "output", "cache_write_5m", "cache_write_1h", "cache_read")


@dataclass(frozen=True)
class Price:
    """USD per million tokens for one model of the table."""

    model: str  # the table key that matched
    input: float
    output: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float


@dataclass(frozen=True)
class _Table:
    as_of: str
    source: str
    prices: dict[str, Price]
    windows: dict[str, int]  # context windows in tokens, by the same keys, where published


def _number(model: str, field: str, value: object) -> float:
    # bool is an int subclass; a true/false price is a typo, not a price.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"pricing.json: {model}.{field} must be a number, got {value!r}")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"pricing.json: {model}.{field} must be >= 0, got {value!r}")
    return float(value)


@functools.cache
def _table() -> _Table:
    raw = resources.files("sidemirror").joinpath("data/pricing.json").read_text("utf-8")
    data = json.loads(raw)
    prices: dict[str, Price] = {}
    windows: dict[str, int] = {}
    for model, fields in data["models"].items():
        missing = [name for name in _FIELDS if name not in fields]
        if missing:
            raise ValueError(f"pricing.json: {model} lacks {', '.join(missing)}")
        values = [_number(model, name, fields[name]) for name in _FIELDS]
        prices[model.lower()] = Price(model, *values)
        window = fields.get("context_window")
        if window is not None:
            if isinstance(window, bool) or not isinstance(window, int) or window < 1:
                raise ValueError(f"pricing.json: {model}.context_window must be a positive integer")
            windows[model.lower()] = window
    return _Table(str(data["as_of"]), str(data["source"]), prices, windows)


def pricing_as_of() -> str:
    """The date the price table was checked (ISO ``YYYY-MM-DD``)."""
    return _table().as_of


# Bedrock: "anthropic.claude-...", with a cross-region prefix "us." / "eu." / "apac." /
# "global." / "jp." ...; its version tag "-v1:0"; Vertex's "@20250929" version suffix.
_BEDROCK_PREFIX = re.compile(r"^(?:[a-z]{2,8}\.)?anthropic\.")
_BEDROCK_VERSION = re.compile(r"-v\d+(?::\d+)?$")
# A snapshot date, possibly followed by a tag ("-20251101:thinking").
_DATE_SUFFIX = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})(?=(?:[-:][a-z]+)*$)")
# "claude-sonnet-4.5" (OpenRouter style) is "claude-sonnet-4-5".
_DOTTED_VERSION = re.compile(r"(?<=\d)\.(?=\d)")
# What may follow a table key for the name to still mean that model at that price:
# aliases and reasoning-effort tags. A version ("-6") or a size ("-mini", "-nano",
# "-pro") names another model with its own price, so it must not match.
_HARMLESS_SUFFIX = re.compile(r"(?:[-:](?:latest|thinking|chat|minimal|low|medium|high))+")


def _normalize(model: str) -> str:
    name = model.strip().lower()
    name = name.rsplit("/", 1)[-1]  # "anthropic/...", "converse/...", ARNs
    name = name.split("@", 1)[0]
    name = _BEDROCK_PREFIX.sub("", name)
    name = _BEDROCK_VERSION.sub("", name)
    name = _DATE_SUFFIX.sub("", name)
    if name.startswith("claude"):
        name = _DOTTED_VERSION.sub("-", name)
    return name


def price_for(model: str | None) -> Price | None:
    """The table price for ``model``, or ``None`` when the table does not know it."""
    if not model:
        return None
    prices = _table().prices
    exact = prices.get(model.strip().lower())
    if exact is not None:
        return exact
    name = _normalize(model)
    if name in prices:
        return prices[name]
    # Longest key that the name extends only by a harmless suffix ("-latest").
    matches = [
        key
        for key in prices
        if name.startswith(key) and _HARMLESS_SUFFIX.fullmatch(name, len(key)) is not None
    ]
    return prices[max(matches, key=len)] if matches else None


def context_window_for(model: str | None) -> int | None:
    """The model's context window from the table, or ``None`` when it gives none."""
    price = price_for(model)
    return None if price is None else _table().windows.get(price.model.lower())


def estimate_cost_usd(
    model: str | None,
    *,
    input_tokens: int,
    output_tokens: int,
    cache_read_tokens: int,
    cache_write_5m_tokens: int,
    cache_write_1h_tokens: int,
) -> float | None:
    """Estimated cost in USD, or ``None`` for a model the table does not know.

    Token counts follow Anthropic's usage fields: ``input_tokens`` excludes cache reads
    and writes. OpenAI reports cached tokens inside its input count; subtract them first.
    """
    counts = {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_read_tokens": cache_read_tokens,
        "cache_write_5m_tokens": cache_write_5m_tokens,
        "cache_write_1h_tokens": cache_write_1h_tokens,
    }
    for name, count in counts.items():
        if count < 0:
            raise ValueError(f"{name} must be >= 0, got {count!r}")
    price = price_for(model)
    if price is None:
        return None
    total = (
        input_tokens * price.input
        + output_tokens * price.output
        + cache_read_tokens * price.cache_read
        + cache_write_5m_tokens * price.cache_write_5m
        + cache_write_1h_tokens * price.cache_write_1h
    )
    return total / _TOKENS_PER_UNIT
