"""Prices from the shipped, dated table; cost estimates; model-name matching."""

from __future__ import annotations

import json
import re
from importlib import resources

import pytest
from sidemirror.core.pricing import Price, estimate_cost_usd, price_for, pricing_as_of

TABLE = json.loads(
    resources.files("sidemirror").joinpath("data/pricing.json").read_text(encoding="utf-8")
)


def test_table_is_dated_and_sourced() -> None:
    assert re.fullmatch(r"2026-\d{2}-\d{2}", TABLE["as_of"])
    assert TABLE["source"]
    assert pricing_as_of() == TABLE["as_of"]


def test_brief_models_are_present_with_their_prices() -> None:
    expected = {
        "claude-opus-4": (15, 75, 18.75, 30, 1.5),
        "claude-opus-4-1": (15, 75, 18.75, 30, 1.5),
        "claude-opus-4-5": (5, 25, 6.25, 10, 0.5),
        "claude-sonnet-4": (3, 15, 3.75, 6, 0.3),
        "claude-sonnet-4-5": (3, 15, 3.75, 6, 0.3),
        "claude-3-7-sonnet": (3, 15, 3.75, 6, 0.3),
        "claude-3-5-sonnet": (3, 15, 3.75, 6, 0.3),
        "claude-haiku-4-5": (1, 5, 1.25, 2, 0.1),
        "claude-3-5-haiku": (0.8, 4, 1, 1.6, 0.08),
        "gpt-5": (1.25, 10, 0, 0, 0.125),
        "gpt-5-codex": (1.25, 10, 0, 0, 0.125),
        "gpt-5-mini": (0.25, 2, 0, 0, 0.025),
    }
    for model, (inp, out, w5, w1h, read) in expected.items():
        assert price_for(model) == Price(model, inp, out, w5, w1h, read), model


def test_sonnet_cost_by_hand() -> None:
    row = TABLE["models"]["claude-sonnet-4-5"]
    tokens = dict(input=1_200, output=850, read=40_000, w5=3_000, w1h=1_000)
    expected = (
        tokens["input"] * row["input"]
        + tokens["output"] * row["output"]
        + tokens["read"] * row["cache_read"]
        + tokens["w5"] * row["cache_write_5m"]
        + tokens["w1h"] * row["cache_write_1h"]
    ) / 1_000_000
    # 1200*3 + 850*15 + 40000*0.3 + 3000*3.75 + 1000*6 = 45_600 -> $0.0456
    assert expected == pytest.approx(0.0456)
    cost = estimate_cost_usd(
        "claude-sonnet-4-5-20250929",
        input_tokens=1_200,
        output_tokens=850,
        cache_read_tokens=40_000,
        cache_write_5m_tokens=3_000,
        cache_write_1h_tokens=1_000,
    )
    assert cost == pytest.approx(expected)


def test_opus_and_gpt5_cost_by_hand() -> None:
    opus = TABLE["models"]["claude-opus-4-1"]
    cost = estimate_cost_usd(
        "claude-opus-4-1",
        input_tokens=10,
        output_tokens=2_000,
        cache_read_tokens=100_000,
        cache_write_5m_tokens=0,
        cache_write_1h_tokens=5_000,
    )
    expected = (10 * opus["input"] + 2_000 * opus["output"] + 100_000 * opus["cache_read"]
                + 5_000 * opus["cache_write_1h"]) / 1e6  # fmt: skip
    assert cost == pytest.approx(expected)
    assert cost == pytest.approx(0.45015)

    gpt = TABLE["models"]["gpt-5"]
    cost = estimate_cost_usd(
        "gpt-5",
        input_tokens=8_000,
        output_tokens=1_000,
        cache_read_tokens=20_000,
        cache_write_5m_tokens=0,
        cache_write_1h_tokens=0,
    )
    expected = (8_000 * gpt["input"] + 1_000 * gpt["output"] + 20_000 * gpt["cache_read"]) / 1e6
    assert cost == pytest.approx(expected)
    assert cost == pytest.approx(0.0225)


def test_zero_tokens_cost_nothing() -> None:
    zero = dict(
        input_tokens=0,
        output_tokens=0,
        cache_read_tokens=0,
        cache_write_5m_tokens=0,
        cache_write_1h_tokens=0,
    )
    assert estimate_cost_usd("claude-haiku-4-5", **zero) == 0.0


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("claude-opus-4-5-20251101", "claude-opus-4-5"),
        ("claude-3-5-haiku-20241022", "claude-3-5-haiku"),
        ("gpt-5-2025-08-07", "gpt-5"),
        ("gpt-5-mini-2025-08-07", "gpt-5-mini"),
        # Bedrock, with and without a cross-region prefix, and as recorded by a proxy.
        ("anthropic.claude-3-7-sonnet-20250219-v1:0", "claude-3-7-sonnet"),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
        ("global.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5"),
        ("converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5"),
        ("anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet"),
        # Vertex AI version suffix.
        ("claude-opus-4-1@20250805", "claude-opus-4-1"),
        ("claude-3-5-sonnet-v2@20241022", "claude-3-5-sonnet"),
        # Router styles, aliases and case.
        ("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),
        ("claude-3-5-sonnet-latest", "claude-3-5-sonnet"),
        ("claude-opus-4-5-20251101:thinking", "claude-opus-4-5"),
        ("GPT-5-Codex", "gpt-5-codex"),
    ],
)
def test_name_matching(name: str, key: str) -> None:
    price = price_for(name)
    assert price is not None
    assert price.model == key


@pytest.mark.parametrize(
    "name",
    [
        None,
        "",
        "<synthetic>",
        "claude-opus-4-9",  # a newer version is another price, not claude-opus-4's
        "claude-sonnet-5",
        "gpt-5-nano",  # a size variant is another price, not gpt-5's
        "gpt-5-pro",
        "gpt-5-codex-mini",
        "gpt-5.1",
        "gpt-4o",
        "llama-3.1-70b",
        "claude",
    ],
)
def test_unknown_models_have_no_price(name: str | None) -> None:
    assert price_for(name) is None
    cost = estimate_cost_usd(
        name,
        input_tokens=1_000,
        output_tokens=1_000,
        cache_read_tokens=0,
        cache_write_5m_tokens=0,
        cache_write_1h_tokens=0,
    )
    assert cost is None


def test_negative_tokens_are_an_error() -> None:
    with pytest.raises(ValueError, match="output_tokens.*-5"):
        estimate_cost_usd(
            "gpt-5",
            input_tokens=0,
            output_tokens=-5,
            cache_read_tokens=0,
            cache_write_5m_tokens=0,
            cache_write_1h_tokens=0,
        )
