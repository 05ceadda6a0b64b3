"""Redaction, part 2 (issue 14): a token is recognised after any punctuation (a path's
"/" included), values typed by browser-automation code are hidden, and redacting twice
changes nothing."""

from __future__ import annotations

import pytest
from sidemirror.core.redact import redact_text

AWS = "AKIA" + "IOSFODNN7EXAMPLE"
GOOGLE = "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
TOKENS = {
    "aws_access_key": AWS,
    "google_api_key": GOOGLE,
    "github_token": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "anthropic_key": "sk-ant-api03-" + "abcDEF123456ghiJKL789012mnoPQR",
    "openai_key": "sk-proj-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2",
    "slack_token": "xoxb-" + "123456789012-123456789012-abcdefABCDEF",
    "stripe_key": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlX2hlcmU",
}
BEFORE = ["/", "=", '"', "'", "(", "[", "{", "<", ":", ",", "`", "@", "|"]


@pytest.mark.parametrize("rule", sorted(TOKENS))
@pytest.mark.parametrize("before", BEFORE)
def test_a_token_is_recognised_after_any_punctuation(rule: str, before: str) -> None:
    out = redact_text(f"see{before}{TOKENS[rule]}{'/' if before == '/' else ' '}end")
    assert TOKENS[rule] not in out and f"[REDACTED:{rule}]" in out


def test_keys_as_path_segments() -> None:
    assert (
        redact_text(f"s3://bucket/{AWS}/object") == "s3://bucket/[REDACTED:aws_access_key]/object"
    )
    assert redact_text(f"https://x.test/keys/{GOOGLE}?q=1").count("[REDACTED:google_api_key]") == 1


@pytest.mark.parametrize(
    ("code", "shown"),
    [
        ('await page.fill("#pw", "hunter2")', 'await page.fill("#pw", "[REDACTED:typed]")'),
        (
            "page.getByLabel('Password').fill('s3cret!')",
            "page.getByLabel('Password').fill('[REDACTED:typed]')",
        ),
        ('page.keyboard.type("4111 1111 1111 1111")', 'page.keyboard.type("[REDACTED:typed]")'),
        (
            "page.locator('#otp').pressSequentially('123456')",
            "page.locator('#otp').pressSequentially('[REDACTED:typed]')",
        ),
        (
            'page.get_by_label("Password").fill("hunter2")',
            'page.get_by_label("Password").fill("[REDACTED:typed]")',
        ),
        ("cy.get('#pw').type('hunter2{enter}')", "cy.get('#pw').type('[REDACTED:typed]')"),
        ('el.send_keys("hunter2")', 'el.send_keys("[REDACTED:typed]")'),
        ("await page.type(sel, `hunter2`)", "await page.type(sel, `[REDACTED:typed]`)"),
        ("page.fill('#pw', 'it\\'s')", "page.fill('#pw', '[REDACTED:typed]')"),
        # Inside a JSON string (a tool call's input), quotes are escaped.
        (
            '{"code":"page.fill(\\"#pw\\", \\"hunter2\\")"}',
            '{"code":"page.fill(\\"#pw\\", \\"[REDACTED:typed]\\")"}',
        ),
        # Not typed values: no string literal, an empty one, a template reference.
        ("Array(3).fill(0)", "Array(3).fill(0)"),
        ('page.fill("#pw", password)', 'page.fill("#pw", password)'),
        ('page.fill("#pw", "")', 'page.fill("#pw", "")'),
        ("page.fill('#pw', `${PASSWORD}`)", "page.fill('#pw', `${PASSWORD}`)"),
        ('page.fill("a"); other("b", "c")', 'page.fill("[REDACTED:typed]"); other("b", "c")'),
    ],
)
def test_values_typed_by_automation_code(code: str, shown: str) -> None:
    assert redact_text(code) == shown


def test_redacting_twice_changes_nothing() -> None:
    from tests.reliability.test_redaction_corpus import CORPUS

    for _rule, _secret, text in CORPUS:
        once = redact_text(text)
        assert redact_text(once) == once
