"""docs/api.md documents exactly the routes the app registers.

The reference is written by hand, so it drifts when a route is added, renamed or removed. These
tests build the app the way the server tests do and compare its route table with the doc:

- every route (method + canonical path, HEAD skipped) has a heading `### METHOD /path`, and every
  such heading names a route (the headings are the doc's authoritative list);
- any other `METHOD /path` written in inline code (tables, prose) names a route too, where a
  concrete value may stand for a `{placeholder}` of the route.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
from aiohttp import web
from sidemirror.app import create_app
from sidemirror.web.forward_listener import forward_routes

from tests.harness.auth import TOKEN
from tests.harness.paths import ROOT
from tests.server.support import make_settings

DOC = ROOT / "docs" / "api.md"
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
_METHOD = "|".join(METHODS)
# A route heading: `### GET /workspace/{ws}/session`, nothing else on the line.
HEADING = re.compile(rf"^### (?P<method>{_METHOD}) (?P<path>/\S*)[ \t]*$", re.M)
# Any level-3 heading that starts like a route heading (to catch a malformed one).
HEADING_START = re.compile(rf"^### (?:{_METHOD}) .*$", re.M)
# A route named in inline code: `GET /api/refs` or `GET /api/refs?url=…` (query ignored).
MENTION = re.compile(rf"`(?P<method>{_METHOD}) (?P<path>/[^\s`?#]*)")

Route = tuple[str, str]


def _fmt(routes: set[Route] | list[Route]) -> str:
    return ", ".join(f"{m} {p}" for m, p in sorted(routes, key=lambda r: (r[1], r[0])))


@pytest.fixture(scope="module")
def app_routes(tmp_path_factory: pytest.TempPathFactory) -> set[Route]:
    app = create_app(make_settings(tmp_path_factory.mktemp("api-doc")), TOKEN)
    routes: set[Route] = set()
    # The forward socket's routes (web/forward_listener.py) are documented beside the port's.
    forward = web.Application()
    forward.add_routes(forward_routes())
    for route in [*app.router.routes(), *forward.router.routes()]:
        if route.method == "HEAD" or route.resource is None:
            continue  # aiohttp adds a HEAD route for every GET
        routes.add((route.method, route.resource.canonical))
    assert routes, "the app registered no routes"
    return routes


@pytest.fixture(scope="module")
def doc() -> str:
    return DOC.read_text(encoding="utf-8")


def _template(path: str) -> re.Pattern[str]:
    """`/workspace/{ws}/session` → a pattern also matching `/workspace/0962d12f9c48/session`."""
    parts = re.split(r"(\{[^}/]+\})", path)
    body = "".join(
        r"(?:\{[^}/]+\}|[^/]+)" if part.startswith("{") else re.escape(part) for part in parts
    )
    return re.compile(body + "$")


def test_route_headings_are_well_formed(doc: str) -> None:
    bad = [line for line in HEADING_START.findall(doc) if not HEADING.fullmatch(line)]
    assert not bad, f"route headings must be exactly `### METHOD /path`: {bad}"


def test_every_route_has_a_heading_and_every_heading_is_a_route(
    app_routes: set[Route], doc: str
) -> None:
    headings = [(m["method"], m["path"]) for m in HEADING.finditer(doc)]
    twice = [route for route, n in Counter(headings).items() if n > 1]
    missing = app_routes - set(headings)
    extra = set(headings) - app_routes
    problems = []
    if missing:
        problems.append(f"routes the app has but docs/api.md has no heading for: {_fmt(missing)}")
    if extra:
        problems.append(f"headings in docs/api.md for routes the app does not have: {_fmt(extra)}")
    if twice:
        problems.append(f"routes with more than one heading: {_fmt(twice)}")
    assert not problems, "\n".join(problems)


def test_routes_named_in_the_text_exist(app_routes: set[Route], doc: str) -> None:
    patterns = [(method, _template(path)) for method, path in app_routes]
    unknown = {
        (m["method"], m["path"])
        for m in MENTION.finditer(doc)
        if not any(m["method"] == method and pat.match(m["path"]) for method, pat in patterns)
    }
    assert not unknown, f"docs/api.md names routes the app does not have: {_fmt(unknown)}"
