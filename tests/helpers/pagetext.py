"""What a reader of the status page sees, for the tests of both tiers: the visible text (text
nodes and hover titles, not CSS) and which English labels of the page appear in it."""

from __future__ import annotations

import re
from html.parser import HTMLParser


class _Visible(HTMLParser):
    """The text a reader sees: text nodes (not CSS, not a script) and the hover titles."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._style = False

    def handle_starttag(self, tag, attrs):
        self._style = tag in ("style", "script")
        self.parts += [v for k, v in attrs if k == "title" and v]

    def handle_endtag(self, tag):
        self._style = False

    def handle_data(self, data):
        if not self._style:
            self.parts.append(data)


def visible(html: str) -> str:
    parser = _Visible()
    parser.feed(html)
    return "\n".join(parser.parts)


def english_labels(text: str, record_text: list[str]) -> list[str]:
    """The English page's labels (those the Chinese page words differently) found in `text`, after
    the record's own text (a node's ssh error, paths) is taken out."""
    from tipcgen.results.page import WORDS

    for own in record_text:
        text = text.replace(own, " ")
    text = re.sub(r"\S*/\S*", " ", text)  # paths: config files, logs
    found = []
    for key, en in WORDS["en"].items():
        if en == WORDS["zh"][key] or "{" in en or len(en) < 3:
            continue
        if re.search(r"(?<![\w-])" + re.escape(en) + r"(?![\w-])", text):
            found.append(en)
    return found
