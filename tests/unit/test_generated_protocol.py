"""The extension's protocol module and docs/protocol.md are generated from the models."""

from __future__ import annotations

import re

from sidemirror import PROTOCOL_VERSION, gen_protocol
from sidemirror.core.models import ITEM_MODELS


def test_generated_files_are_fresh() -> None:
    assert gen_protocol.main(["--check"]) == 0, "run: python -m sidemirror.gen_protocol"


def test_js_module_exports_every_item_type_and_the_version() -> None:
    js = gen_protocol.JS_PATH.read_text(encoding="utf-8")
    assert f"export const PROTOCOL_VERSION = {PROTOCOL_VERSION};" in js
    item_types = re.search(r"export const ITEM_TYPES = Object.freeze\((\[.*?\])\);", js, re.S)
    assert item_types is not None
    for model in ITEM_MODELS:
        assert f'"{model.model_fields["type"].default}"' in item_types.group(1)


def test_docs_document_every_field_of_every_item() -> None:
    md = gen_protocol.MD_PATH.read_text(encoding="utf-8")
    for model in ITEM_MODELS:
        assert f"### `{model.model_fields['type'].default}`" in md
        for field in model.model_fields:
            assert f"| `{field}` |" in md
