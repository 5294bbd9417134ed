"""Helpers the tests share (no tests here): report builders, an HTML parser, the browser check, simulated responses,
and the real HTTP parts (a ``transformers serve`` launcher and a fault proxy)."""
