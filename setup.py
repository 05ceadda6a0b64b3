"""Packaging beyond what pyproject.toml can say: the Chrome extension travels inside the package
(`sidemirror/extension/`, found by `sidemirror extension`), mapped from the repository's
top-level extension/ folder, so a pip or pipx install can load it without a checkout."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages("server"), "sidemirror.extension"],
    package_dir={"": "server", "sidemirror.extension": "extension"},
    package_data={"sidemirror.extension": ["**/*"]},
)
