"""The one test harness: real `sidemirror serve` processes, real Chromium, ports, waiting.

Every test that needs a running server or browser starts it from here (server.py, browser.py),
so that how a server is launched, made ready, logged and stopped is written once.
"""
