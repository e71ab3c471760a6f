"""Tokens as the provider bills them where the log's text misleads: an inline image is billed by its size.

An image's base64 text is hundreds of thousands of o200k tokens; the provider bills about
``width x height / 750`` (one 279,219-token screenshot made a session's estimate +92% before
this). ``ProviderMeter`` is the project's meter with images counted that way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["IMAGE_TOKENS", "image_tokens", "ProviderMeter"]

IMAGE_TOKENS = 1_600  # Anthropic: about width x height / 750, an image resized to at most ~1.15 megapixels


def image_tokens(url: str) -> int:
    """Tokens a provider bills for an inline image: ``width x height / 750`` from a PNG header, at most 1,600.

    (https://platform.claude.com/docs/en/build-with-claude/vision, "calculate image costs"); an
    image whose size the header does not give counts the most, 1,600.
    """
    import base64

    head = url.split(",", 1)[1][:64] if "," in url else ""
    try:
        raw = base64.b64decode(head[: len(head) - len(head) % 4])
    except ValueError:
        return IMAGE_TOKENS
    if raw[:8] == b"\x89PNG\r\n\x1a\n" and len(raw) >= 24:
        width, height = int.from_bytes(raw[16:20], "big"), int.from_bytes(raw[20:24], "big")
        return max(1, min(IMAGE_TOKENS, round(width * height / 750)))
    return IMAGE_TOKENS


def _image_urls(message: Any) -> list[str]:
    content = message.get("content") if isinstance(message, Mapping) else None
    if not isinstance(content, list):
        return []
    out = []
    for part in content:
        if isinstance(part, Mapping) and part.get("type") in ("image_url", "input_image", "image"):
            url = part.get("image_url")
            url = url.get("url") if isinstance(url, Mapping) else url
            if isinstance(url, str) and url.startswith("data:"):
                out.append(url)
    return out


class ProviderMeter:
    """The project's token meter, but an inline image counts what the provider bills for it, not its base64 text."""

    def __init__(self, unit: str = "o200k") -> None:
        from ..context.sizing import Meter

        self.unit = unit
        self.base = Meter(unit)
        self._cache: dict[int, tuple[Any, int]] = {}

    def size(self, message: Any) -> int:
        hit = self._cache.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        urls = _image_urls(message)
        if not urls:
            value = self.base.size(message)
        else:
            parts = [p for p in message["content"] if not (isinstance(p, Mapping) and
                                                          p.get("type") in ("image_url", "input_image", "image"))]
            value = self.base.size({**message, "content": parts}) + sum(image_tokens(u) for u in urls)
        self._cache[id(message)] = (message, value)
        return value

    def total(self, messages: Any) -> int:
        return sum(self.size(m) for m in messages)

    __call__ = size
