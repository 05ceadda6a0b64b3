"""Packaging beyond what pyproject.toml can say: the Chrome extension travels inside the package
(`sidemirror/extension/`, found by `sidemirror extension`), mapped from the repository's
top-level extension/ folder, so a pip or pipx install can load it without a checkout. Every
folder is listed as a package (namespace discovery) so that setuptools ships the data folders
without asking."""

from pathlib import Path

from setuptools import find_namespace_packages, setup

EXTENSION = Path(__file__).parent / "extension"
extension_packages = ["sidemirror.extension"] + [
    "sidemirror.extension." + ".".join(d.relative_to(EXTENSION).parts)
    for d in sorted(EXTENSION.rglob("*"))
    if d.is_dir() and d.name not in ("node_modules", "__pycache__")
]

setup(
    packages=[*find_namespace_packages("server", exclude=["*__pycache__*"]), *extension_packages],
    package_dir={"": "server", "sidemirror.extension": "extension"},
    package_data={
        "sidemirror.data": ["*.json"],
        "sidemirror.data.demo": ["*"],
        **{name: ["*"] for name in extension_packages},
    },
)
