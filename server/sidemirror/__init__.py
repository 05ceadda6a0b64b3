"""Sidemirror: mirror a coding agent's session into Chrome's side panel."""

__version__ = "0.1.0"
