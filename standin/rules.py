"""What real Telegram enforces on what a bot sends: its HTML subset, 4096 characters of
visible text (counted in UTF-16 code units), 64-byte callback data, 50 inline results."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

MAX_TEXT = 4096
MAX_CALLBACK_BYTES = 64
MAX_INLINE_RESULTS = 50
MAX_CAPTION = 1024  # a photo's caption, visible characters (Bot API sendPhoto)
MAX_PHOTO_BYTES = 10 * 2**20  # "The photo must be at most 10 MB in size" (Bot API sendPhoto)
START_PARAMETER = re.compile(r"[A-Za-z0-9_-]{1,64}")  # a deep link's start parameter
ALLOWED_TAGS = {
    "b",
    "strong",
    "i",
    "em",
    "u",
    "ins",
    "s",
    "strike",
    "del",
    "span",
    "tg-spoiler",
    "a",
    "code",
    "pre",
    "blockquote",
    "tg-emoji",
}


class TelegramHTMLError(ValueError):
    pass


class _HTMLChecker(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ALLOWED_TAGS:
            raise TelegramHTMLError(f'Can\'t parse entities: unsupported start tag "{tag}"')
        if tag == "a" and not dict(attrs).get("href"):
            raise TelegramHTMLError("Can't parse entities: a tag without href")
        if tag == "span" and dict(attrs).get("class") != "tg-spoiler":
            raise TelegramHTMLError("Can't parse entities: span without tg-spoiler class")
        self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            raise TelegramHTMLError(f'Can\'t parse entities: unexpected end tag "{tag}"')
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def visible_text(text: str, parse_mode: str | None) -> str:
    """The text Telegram would show, or TelegramHTMLError where Telegram answers 400."""
    if parse_mode != "HTML":
        return text
    bad_amp = re.search(r"&(?!(?:lt|gt|amp|quot|#\d+|#x[0-9a-fA-F]+);)", text)
    if bad_amp:
        raise TelegramHTMLError(
            f"Can't parse entities: bad entity at byte offset {bad_amp.start()}"
        )
    bad_lt = re.search(r"<(?!/?[a-zA-Z][\w-]*(?:\s[^<>]*)?>)", text)
    if bad_lt:
        raise TelegramHTMLError(
            f"Can't parse entities: unexpected < at byte offset {bad_lt.start()}"
        )
    checker = _HTMLChecker()
    checker.feed(text)
    checker.close()
    if checker.stack:
        raise TelegramHTMLError(f'Can\'t parse entities: unclosed tag "{checker.stack[-1]}"')
    return html.unescape("".join(checker.text))


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk; a photo that is not a PNG is refused as
    Telegram refuses an unreadable image (the bot sends only PNG charts)."""
    if len(data) < 24 or data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise ValueError("not a PNG")
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
