"""image-pipeline: what its four grains share: the data-layer keys, the image formats, the timing record.

Not a grain: `sand deploy` ships it in the entry grain's zip and every grain imports it from the code folder.

The picture itself never travels in an event: extract_metadata stores it in the data layer under
`image/<execution id>` and the events carry that key (the paper's functions read the image from local
storage; here the host's local data layer). make_thumbnail deletes it when the pipeline is done and leaves
`thumbnail/<execution id>` (JPEG bytes) and `metadata/<execution id>` (JSON) behind.
"""

from __future__ import annotations

import time
from typing import Any

# magic bytes -> ImageMagick coder / Pillow format; nothing else is handed to ImageMagick
FORMATS = {b"\xff\xd8\xff": "JPEG", b"\x89PNG\r\n\x1a\n": "PNG", b"GIF87a": "GIF", b"GIF89a": "GIF"}
WEBP = (b"RIFF", b"WEBP")  # bytes 0-3 and 8-11
MAX_PIXELS = 50_000_000  # verify_metadata refuses larger pictures (Pillow's decompression-bomb limit is 89 Mpx)


class ImageError(ValueError):
    """The request's picture cannot go through the pipeline; the message says why."""


def sniff_format(data: bytes) -> str:
    """The picture's format by its first bytes: JPEG, PNG, GIF or WEBP; ImageError for anything else."""
    for magic, fmt in FORMATS.items():
        if data.startswith(magic):
            return fmt
    if data[:4] == WEBP[0] and data[8:12] == WEBP[1]:
        return "WEBP"
    raise ImageError(f"the picture is not JPEG, PNG, GIF or WebP (it starts with {data[:8].hex()}); send one of those")


def image_key(execution_id: str) -> str:
    return f"image/{execution_id}"


def thumbnail_key(execution_id: str) -> str:
    return f"thumbnail/{execution_id}"


def metadata_key(execution_id: str) -> str:
    return f"metadata/{execution_id}"


def read_image(context: Any, key: str) -> bytes:
    """The picture's bytes from the data layer (a value that happens to be valid UTF-8 comes back as str)."""
    data = context.get(key)
    if data is None:
        raise ImageError(f"the picture is not in the data layer under {key!r}: was it deleted?")
    return data if isinstance(data, bytes) else data.encode()


def timings(event: Any, context: Any, start_ns: int) -> list[dict[str, Any]]:
    """The timing records so far plus this grain's (start and end, time.time_ns()), for compute-time vs
    platform-overhead breakdowns (paper §6.6, Figure 7)."""
    previous = event.get("timings", []) if isinstance(event, dict) else []
    return [*previous, {"grain": context.get_grain_name(), "start_ns": start_ns, "end_ns": time.time_ns()}]
