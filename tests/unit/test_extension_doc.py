"""docs/architecture.md names every extension module, so a newcomer finds each one from it."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXTENSION = ROOT / "extension"


def test_every_extension_module_is_in_the_architecture_doc() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    modules = [
        path
        for path in EXTENSION.rglob("*")
        if path.suffix in {".js", ".css", ".html"} and "vendor" not in path.parts
    ]
    assert modules, "no extension modules found"
    missing = sorted(
        str(path.relative_to(EXTENSION)) for path in modules if f"`{path.name}`" not in doc
    )
    assert missing == [], f"docs/architecture.md does not name: {missing}"
