"""A small HTML tree parser (stdlib), to inspect what the renderers and the browser produced."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

__all__ = ["Element", "parse_html", "table_rows"]

_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"})


@dataclass
class Element:
    """One parsed HTML element: tag, attributes, children and its own text pieces."""

    tag: str
    attrs: dict[str, str | None]
    children: list[Element] = field(default_factory=list)
    text: list[str] = field(default_factory=list)

    def iter(self, tag: str | None = None):
        """This element and its descendants, depth-first, optionally only those with ``tag``."""
        if tag is None or self.tag == tag:
            yield self
        for child in self.children:
            yield from child.iter(tag)

    def all_text(self) -> str:
        """The text of this element and its descendants, concatenated."""
        return "".join(self.text) + "".join(c.all_text() for c in self.children)


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        element = Element(tag, dict(attrs))
        self.stack[-1].children.append(element)
        if tag not in _VOID:
            self.stack.append(element)

    def handle_startendtag(self, tag, attrs):
        self.stack[-1].children.append(Element(tag, dict(attrs)))

    def handle_endtag(self, tag):
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data):
        self.stack[-1].text.append(data)


def parse_html(text: str) -> Element:
    """Parse an HTML document into an :class:`Element` tree (stdlib parser; entities decoded in text)."""
    builder = _TreeBuilder()
    builder.feed(text)
    builder.close()
    return builder.root


def table_rows(root: Element, table_id: str) -> list[list[str]]:
    """The body rows of the table with ``id=table_id``, each as its cells' text."""
    table = next(t for t in root.iter("table") if t.attrs.get("id") == table_id)
    body = next(table.iter("tbody"))
    return [[cell.all_text() for cell in row.iter("td")] for row in body.iter("tr")]
