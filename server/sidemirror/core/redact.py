"""Secret redaction, applied before anything leaves a source adapter.

A secret becomes ``[REDACTED:<rule>]``. Context rules (headers, ``name=value``, URLs) keep
the name and punctuation and hide only the value, so the reader still sees what was there.

Speed: this runs on every string of multi-megabyte transcripts. A rule runs only when one
of its trigger substrings is present, and every pattern starts with a literal or a plain
character class so the regex engine can skip ahead; word-boundary checks that would
prevent that (a leading look-behind) are done in Python on the rare candidate instead.

Values stop at a backslash (a PEM block takes whole escapes), so redacting the raw text of
a JSON line cannot break an escape; ``\\n``/``\\t``/``\\r`` escapes count as boundaries.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass

from ahocorasick_rs import BytesAhoCorasick, Implementation

_Check = Callable[[re.Match[str]], bool]

# Characters that may not directly precede a token for it to count as a whole word. Anything
# else may: a token counts after "/", "=", quotes, brackets, spaces and punctuation alike.
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
# For tokens whose prefix is plain letters ("AKIA", "AIza"), "+" too, so such a prefix occurring
# by chance inside base64 data (an inline image) is left alone. Not "/": a key is often a path
# segment (`s3://bucket/AKIA…`, `…/keys/AIza…`), and in base64 the token's exact length and the
# non-alphanumeric character each pattern requires after it already make a chance match rare.
_BASE64_CHARS = _WORD_CHARS | frozenset("+")


_HEX = frozenset("0123456789ABCDEFabcdef")


def _boundary_before(text: str, index: int, word_chars: frozenset[str] = _WORD_CHARS) -> bool:
    if index == 0 or text[index - 1] not in word_chars:
        return True
    # "\nghp_..." in the raw text of a JSON line: the escape is a line break.
    if index >= 2 and text[index - 2] == "\\" and text[index - 1] in "nrt":
        return True
    # "%3Dghp_..." in a URL nested in another one (`?next=https%3A%2F%2F…%3Fq%3Dghp_…`): the
    # escape is the "=" or "/" before the token.
    return (
        index >= 3
        and text[index - 3] == "%"
        and text[index - 2] in _HEX
        and text[index - 1] in _HEX
    )


def _left_boundary(match: re.Match[str]) -> bool:
    return _boundary_before(match.string, match.start())


def _left_boundary_b64(match: re.Match[str]) -> bool:
    return _boundary_before(match.string, match.start(), _BASE64_CHARS)


_SECRET_GROUPS = ("secret", "secret2", "secret3", "secret4")


def _secret_span(match: re.Match[str]) -> tuple[int, int] | None:
    """Span of the value to hide, or None when the whole match is the secret."""
    for name in _SECRET_GROUPS:
        if name in match.re.groupindex and match.group(name) is not None:
            return match.span(name)
    return None


def _openai_ok(match: re.Match[str]) -> bool:
    # Real keys are random; a run of 20+ letters and dashes after "sk-" without a
    # single digit is far more likely a kebab-case identifier.
    return _left_boundary(match) and any(ch.isdigit() for ch in match.group("body"))


# "$TOKEN", "${API_KEY}", "{token}", "%s" are references, not secrets; keeping them
# keeps commands readable ("%2F..." is URL encoding, a real value). A value another
# rule already redacted stays too.
_PLACEHOLDER = re.compile(r"[${]|%(?![0-9A-Fa-f]{2})|\[REDACTED:")


def _not_placeholder(match: re.Match[str]) -> bool:
    span = _secret_span(match)
    start = match.start() if span is None else span[0]
    return _PLACEHOLDER.match(match.string, start) is None


@dataclass(frozen=True)
class _Rule:
    name: str
    pattern: re.Pattern[str]
    # The rule runs only if one of these substrings is present. With ``fold`` they
    # are lowercase and are looked for in the lowercased text.
    triggers: tuple[str, ...]
    fold: bool = False
    check: _Check | None = None

    def apply(self, text: str) -> str:
        marker = f"[REDACTED:{self.name}]"

        def replace(match: re.Match[str]) -> str:
            if self.check is not None and not self.check(match):
                return match.group(0)
            span = _secret_span(match)
            if span is None:
                return marker
            # Only the value goes; the name, separator and closing quote stay.
            whole_start, whole_end = match.span()
            return text[whole_start : span[0]] + marker + text[span[1] : whole_end]

        return self.pattern.sub(replace, text)


def _token(name: str, pattern: str, *triggers: str, b64: bool = False) -> _Rule:
    """A rule for a self-identifying token, which must start at a word boundary."""
    check = _left_boundary_b64 if b64 else _left_boundary
    return _Rule(name, re.compile(pattern), triggers, check=check)


# A value in a context rule: stops at whitespace, quotes, angle brackets and
# backslashes (see the module docstring on JSON escapes).
_VALUE = r"""[^\s"'<>\\]+"""
# An optional quote around a name or value, possibly JSON-escaped (\").
_Q = r"""(?:\\?["'])?"""


def _literal(quote: str, value: str) -> str:
    """A non-empty string literal quoted with ' " ` or a JSON-escaped \" (code inside a JSON
    string), its content in group `value`. Escapes (\' inside '…') are taken whole, never
    split, so the raw text of a JSON line stays valid when the content is replaced."""
    return (
        rf"""(?P<{quote}>\\?["'`])"""
        rf"(?P<{value}>(?:(?!(?P={quote}))(?:\\[^\r\n]|[^\r\n\\]))+)(?P={quote})"
    )


# "name: value", "name=value", '"name": "value"' and their JSON-escaped forms.
_SEP = _Q + r"\s*[:=]\s*" + _Q
# Placed after a name's first character: that character starts a word (or follows a
# JSON "\n" escape).
_WORD_START = r"(?:(?<![A-Za-z0-9_].)|(?<=\\[nrt].))"

_QUERY_NAMES = (
    "access_token|refresh_token|id_token|client_secret|api_key|api-key|apikey|"
    "x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature|"
    "token|key|secret|password|passwd|auth|signature|sig|code|session"
)

# How an env-style secret's name may end ("DB_PASSWORD", "NPM_TOKEN", ...).
_ENV_NAME_ENDINGS = (
    *("PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "SECRET_KEY", "SECRET_KEY_BASE"),
    *("API_KEY", "APIKEY", "TOKEN", "ACCESS_KEY", "PRIVATE_KEY", "AUTH_KEY"),
    *("CREDENTIALS", "CREDENTIAL"),
)
_ENV_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _env_name_ok(match: re.Match[str]) -> bool:
    # The match starts at "="; the name before it must be all upper case, digits and
    # underscores ("export DB_PASSWORD=", not "myPASSWORD=" or "x-TOKEN="). Then the
    # value must not be a placeholder.
    text = match.string
    start = match.start()
    while start > 0 and text[start - 1] in _ENV_NAME_CHARS:
        start -= 1
    return _boundary_before(text, start) and _not_placeholder(match)


# Order matters. The PEM block goes first so nothing chews its body. Context rules
# (headers, key=value) come before token rules so the whole header value goes, not
# just the part a token pattern recognises. The generic env rule comes last so a
# specific token inside an assignment keeps its more telling label.
_RULES: tuple[_Rule, ...] = (
    _Rule(
        "private_key",
        re.compile(
            r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
            # A key is a few KB. The bound and stopping at the next BEGIN keep BEGIN lines
            # without an END from rescanning the text after them.
            r"(?:(?:(?!-----BEGIN)[\s\S]){0,20000}?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
            # Cut off before its END (a truncated paste): take the base64 body.
            r"|(?:(?:\s|\\[nrt])*[A-Za-z0-9+/=]{16,})*)"
        ),
        ("PRIVATE KEY",),
    ),
    _Rule(
        "authorization",
        re.compile(
            # "[Aa]" then a look-behind rather than "(?i)\b...": a pattern that starts
            # with a plain character class lets the engine skip ahead fast.
            rf"[Aa]{_WORD_START}(?i:uthorization{_SEP}"
            # Multi-parameter schemes: the whole rest of the value.
            r"(?:(?:digest|aws4-hmac-sha256|negotiate|ntlm|hoba|mutual)\s+"
            r"(?P<secret>(?:[^\r\n\"'<>\\]|\"[^\"\r\n\\]*\")+)"
            # Single-token schemes, or no scheme at all.
            r"|(?:(?:bearer|basic|token|bot|apikey|key)\s+)?"
            r"(?!(?:bearer|basic|token|bot|apikey|key)(?:[\s\"'\\]|$))"
            rf"(?P<secret2>{_VALUE})))"
        ),
        ("authorization",),
        fold=True,
        check=_not_placeholder,
    ),
    _Rule(
        "cookie",
        re.compile(
            # Matches "Cookie" inside "Set-Cookie" too; only the value is replaced.
            rf"[Cc]{_WORD_START}(?i:ookie{_Q}\s*:\s*{_Q})"
            r"(?P<secret>[^\r\n\"'<>\\]*[^\s\"'<>\\])"
        ),
        ("cookie",),
        fold=True,
        check=_not_placeholder,
    ),
    _Rule(
        "aws_secret",
        re.compile(
            r"[AaSs](?i:ws_?secret_?(?:access_?)?key|ecret_?access_?key)"
            rf"{_SEP}(?P<secret>[A-Za-z0-9/+=]{{16,}})"
        ),
        ("secret",),
        fold=True,
    ),
    _Rule(
        "url_credentials",
        # Anchored on "://" (fast to find); the scheme before it is untouched. Brackets
        # never occur unencoded in userinfo, which keeps an earlier marker intact.
        re.compile(r"://[^\s:/?#@\[\]\"'<>\\]+:(?P<secret>[^\s/?#@\[\]\"'<>\\]+)@"),
        ("://",),
        check=_not_placeholder,
    ),
    _Rule(
        "query_secret",
        re.compile(
            r"(?i)[?&#\"'](?:amp;)?(?:" + _QUERY_NAMES + r")="
            r"(?P<secret>[^&#\s\"'<>\\]+)"
        ),
        ("=",),
        check=_not_placeholder,
    ),
    _Rule(
        # The same in a URL percent-encoded inside another URL's query (a login's
        # `?next=https%3A%2F%2Fapp%2Fcb%3Ftoken%3D…`): the value stops at an encoded & or #.
        # A rule of its own, run only when an encoded "=" is there: one pattern for both forms
        # made every redaction of a long text ~20% slower.
        "query_secret",
        re.compile(
            r"%(?i:3f|26|23)(?i:" + _QUERY_NAMES + r")%3[dD]"
            r"(?P<secret>(?:[^&#%\s\"'<>\\]|%(?!26|23)[0-9A-Fa-f]{2})+)"
        ),
        ("%3D", "%3d"),
        check=_not_placeholder,
    ),
    _Rule(
        # Text typed into a page by browser-automation code: Playwright `fill`/`type`/
        # `pressSequentially` (`page.fill("#pw", "…")`, `getByLabel("Password").fill("…")`,
        # `keyboard.type("…")`), Puppeteer `type`, Cypress `.type("…")`, Selenium `send_keys`,
        # WebdriverIO `setValue`. The value is a string literal: the argument after a target (a
        # literal or a plain expression), or the only argument. A typed value need not look like
        # a secret, so it goes whatever it is; a variable (`fill(sel, pw)`) shows no value anyway.
        "typed",
        re.compile(
            r"\.(?:fill|type|pressSequentially|press_sequentially|insertText|insert_text|"
            r"sendKeys|send_keys|setValue|set_value)\(\s*(?:"
            # A target, then the value: `fill("#pw", "…")`, `type(sel, "…", {delay})`.
            r"(?:(?P<q1>\\?[\"'`])(?:(?!(?P=q1))[^\r\n])*(?P=q1)|[\w.$\[\]]+)\s*,\s*"
            rf"{_literal('q', 'secret')}"
            # Or the value alone, as the only argument: `locator.fill("…")`.
            rf"|{_literal('q2', 'secret2')}\s*\))"
        ),
        (
            ".fill(",
            ".type(",
            "ressSequentially(",
            "ress_sequentially(",
            "nsertText(",
            "nsert_text(",
            "endKeys(",
            "end_keys(",
            "etValue(",
            "et_value(",
        ),
        check=_not_placeholder,
    ),
    # Tokens recognisable by their own shape, redacted whole.
    _token("anthropic_key", r"sk-ant-[A-Za-z0-9_-]{20,}", "sk-ant-"),
    _Rule(
        "openai_key",
        re.compile(r"sk-(?:proj-|svcacct-|admin-)?(?P<body>[A-Za-z0-9_-]{20,})"),
        ("sk-",),
        check=_openai_ok,
    ),
    _token(
        "github_token",
        r"gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255}",
        *("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    _token(
        "slack_token",
        r"xox[abposre]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,}",
        *("xox", "xapp-"),
    ),
    _Rule(
        # A webhook URL is a credential by itself; the host stays so it reads as one.
        "slack_token",
        re.compile(r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[\w/-]+)"),
        ("hooks.slack.com",),
    ),
    _token("stripe_key", r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", "_live_", "_test_"),
    _token("google_api_key", r"AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])", "AIza", b64=True),
    _token(
        "aws_access_key",
        r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])",
        *("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
        b64=True,
    ),
    _token("jwt", r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*", "eyJ"),
    _Rule(
        "env_secret",
        re.compile(
            # Anchored on "=" (fast to find), name checked by fixed-width look-behinds.
            "=(?:" + "|".join(f"(?<={name}=)" for name in _ENV_NAME_ENDINGS) + ")"
            r"(?:\"(?P<secret>[^\"\\\r\n]+)\"|'(?P<secret2>[^'\\\r\n]+)'"
            r"|\\\"(?P<secret4>[^\"\\\r\n]+)\\\"|(?P<secret3>[^\s\"'`;&|<>\\]+))"
        ),
        ("=",),
        check=_env_name_ok,
    ),
)


class _Triggers:
    """Which rules' triggers occur in a text, found in one pass: an Aho-Corasick automaton over
    the text's UTF-8 bytes for the case-sensitive triggers, another over those bytes lowercased
    for the `fold` ones. On the fleet's real messages and tool results (2.8 KB on average) this
    takes 10.5 µs where one substring scan per trigger (35 of them, and `str.lower()` of the
    text) took 44-55 µs; every message an agent writes goes through it.

    Every trigger is ASCII, so a trigger occurs in the UTF-8 bytes exactly where it occurs in
    the text, and `bytes.lower()` (ASCII letters only) finds what `str.lower()` would, except
    for the two characters whose lowercase is or holds an ASCII letter (`_ASCII_LOWERING`):
    a text with one of them is lowercased as a string, as before."""

    def __init__(self, rules: tuple[_Rule, ...]) -> None:
        self.rules = rules
        self._exact, self._exact_owners = self._automaton([r for r in rules if not r.fold])
        self._folded, self._folded_owners = self._automaton([r for r in rules if r.fold])

    def _automaton(self, rules: list[_Rule]) -> tuple[BytesAhoCorasick, list[list[int]]]:
        """The automaton of the rules' triggers, and for each of its patterns the rules (their
        index in `self.rules`) it triggers ("=" is two rules' trigger)."""
        owners: dict[str, list[int]] = {}
        for rule in rules:
            for trigger in rule.triggers:
                if not trigger.isascii() or (rule.fold and trigger != trigger.lower()):
                    raise ValueError(f"rule {rule.name}: trigger {trigger!r} is not ASCII/folded")
                owners.setdefault(trigger, []).append(self.rules.index(rule))
        patterns = [trigger.encode() for trigger in owners]
        return BytesAhoCorasick(patterns, implementation=Implementation.DFA), list(owners.values())

    def rules_in(self, text: str) -> list[_Rule]:
        raw = text.encode("utf-8", "surrogatepass")
        if text.isascii() or not any(char in text for char in _ASCII_LOWERING):
            lowered = raw.lower()
        else:
            lowered = text.lower().encode("utf-8", "surrogatepass")
        # Overlapping: every trigger present is reported, even one inside another's match.
        exact = self._exact.find_matches_as_indexes(raw, overlapping=True)
        folded = self._folded.find_matches_as_indexes(lowered, overlapping=True)
        if not exact and not folded:
            return []  # most texts
        hit = {
            rule
            for matches, owners in ((exact, self._exact_owners), (folded, self._folded_owners))
            for pattern, _, _ in matches
            for rule in owners[pattern]
        }
        return [self.rules[index] for index in sorted(hit)]


# The characters outside ASCII whose `str.lower()` holds an ASCII letter: "İ" (U+0130, "i̇")
# and the Kelvin sign (U+212A, "k"). tests/unit/core/test_redact_triggers.py checks the list.
_ASCII_LOWERING = ("\u0130", "\u212a")
_TRIGGERS = _Triggers(_RULES)


def _rules_for(text: str) -> list[_Rule]:
    """The rules whose trigger substrings occur in ``text``, in their order."""
    return _TRIGGERS.rules_in(text)


def redact_text(text: str) -> str:
    """Replace every secret in ``text`` with ``[REDACTED:<rule>]``."""
    # Triggers are looked up once in the input: a later rule's secret is still in the
    # text after earlier rules ran, since markers only ever replace secrets.
    for rule in _rules_for(text):
        text = rule.apply(text)
    return text


def redact_url(url: str) -> str:
    """Redact a URL: the password of ``user:pass@``, secret query parameters, tokens.

    The same rules as ``redact_text``, so a URL is treated identically whether it is
    redacted alone or inside a transcript line.
    """
    return redact_text(url)


# Dict keys whose string value is a secret whatever it looks like. Keys are compared
# lowercased with "_" and "-" removed, by suffix, so "GITHUB_TOKEN", "accessToken",
# "x-api-key" and "db_password" all count while "token_type" and "input_tokens" do not.
_SECRET_KEY_SUFFIXES = (
    *("password", "passwd", "passphrase", "secret", "token", "apikey", "privatekey"),
    *("secretkey", "accesskey", "authorization", "cookie", "cookies", "credential"),
    "credentials",
)
_SECRET_KEYS_EXACT = frozenset({"auth"})
_SECRET_FIELD = "[REDACTED:secret_field]"


def is_secret_key(key: str) -> bool:
    """Whether a mapping key names a secret (``password``, ``api_key``, ``Cookie`` ...)."""
    normalized = key.lower().replace("_", "").replace("-", "")
    return normalized in _SECRET_KEYS_EXACT or normalized.endswith(_SECRET_KEY_SUFFIXES)


MAX_JSON_DEPTH = 200


def redact_json(value: object) -> object:
    """Return a redacted copy of a JSON-like value.

    Every string in nested dicts, lists and tuples goes through ``redact_text``; keys
    stay as they are. A non-empty string under a secret-named key is replaced whole by
    ``[REDACTED:secret_field]``, since such a value need not look like a known token.
    Deeper than ``MAX_JSON_DEPTH`` levels raises ValueError.
    """
    return _redact_json(value, 0)


def _redact_json(value: object, depth: int) -> object:
    if isinstance(value, str):
        return redact_text(value)
    if depth > MAX_JSON_DEPTH:
        # Hostile nesting would exhaust the stack; callers turn ValueError into a rejection.
        raise ValueError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    if isinstance(value, dict):
        result: dict[object, object] = {}
        for key, item in value.items():
            if isinstance(key, str) and isinstance(item, str) and item and is_secret_key(key):
                result[key] = _SECRET_FIELD
            else:
                result[key] = _redact_json(item, depth + 1)
        return result
    if isinstance(value, list):
        return [_redact_json(item, depth + 1) for item in value]
    if isinstance(value, tuple):
        return tuple(_redact_json(item, depth + 1) for item in value)
    return value


# On a decision card a mask hides the secret and nothing else: the rest of the line is what
# Allow approves. A context rule's value runs to the end of a header ("Authorization: Digest
# x; curl … | sh"), so a mask stops at the first shell separator; a PEM block's mask covers
# only lines of key material between BEGIN and END, never what a command wraps in them.
_CARD_STOP = re.compile(r"[;|&()<>`\r\n]|\$\(")
_KEY_MATERIAL = re.compile(r"[A-Za-z0-9+/=]+")


@dataclass(frozen=True)
class CardSpan:
    rule: str
    start: int
    end: int


def _pieces(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The stretches of text[start:end] between separators, whitespace trimmed."""
    pieces: list[tuple[int, int]] = []
    at = start
    for stop in [*_CARD_STOP.finditer(text, start, end), None]:
        piece_end = end if stop is None else stop.start()
        while at < piece_end and text[at].isspace():
            at += 1
        trimmed = piece_end
        while trimmed > at and text[trimmed - 1].isspace():
            trimmed -= 1
        if trimmed > at:
            pieces.append((at, trimmed))
        if stop is not None:
            at = stop.end()
    return pieces


def _card_spans_of(rule: _Rule, match: re.Match[str]) -> list[tuple[int, int]]:
    text = match.string
    if rule.name == "private_key":
        body_start = text.index("-----", match.start() + 5) + 5  # after the BEGIN line
        end_at = text.find("-----END", body_start, match.end())
        body_end = match.end() if end_at < 0 else end_at
        return [
            (a, b)
            for a, b in _pieces(text, body_start, body_end)
            if _KEY_MATERIAL.fullmatch(text, a, b) is not None
        ]
    span = _secret_span(match) or match.span()
    pieces = _pieces(text, *span)
    # The secret is what comes before the first separator; after it, the text is the command.
    if not pieces or _CARD_STOP.search(text, span[0], pieces[0][0]) is not None:
        return []
    return pieces[:1]


def card_spans(text: str) -> list[CardSpan]:
    """Where `redact_text` would hide a secret in `text`, narrowed to the secret's own
    characters: no span crosses `; | & ( ) < >`, a backtick, `$(` or a line break, and a PEM
    key masks only its body. Sorted by start, never overlapping (earlier rules win, as in
    `redact_text`)."""
    taken: list[CardSpan] = []
    starts: list[int] = []  # of `taken`, kept sorted: an overlap test is a bisect, not a scan
    for rule in _rules_for(text):
        for match in rule.pattern.finditer(text):
            if rule.check is not None and not rule.check(match):
                continue
            for start, end in _card_spans_of(rule, match):
                at = bisect.bisect_right(starts, start)
                if (at and taken[at - 1].end > start) or (
                    at < len(taken) and taken[at].start < end
                ):
                    continue
                starts.insert(at, start)
                taken.insert(at, CardSpan(rule.name, start, end))
    return taken
