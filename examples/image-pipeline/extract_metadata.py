"""image-pipeline (paper §6.6, Figure 7), grain 1 of 4: extract the picture's metadata with ImageMagick.

Input (the request): {"image": "<the picture's bytes, base64>", "name": "dog.jpg"} (name optional).
Stores the picture in the data layer (pipeline.image_key) and runs `identify -ping -format ...` on it (header
only: format, size, depth, colour space, JPEG quality, orientation and every EXIF tag). Output to
verify_metadata: {"name", "image_key", "bytes", "identify": {property: value}, "timings"}.
"""

import base64
import binascii
import subprocess
import time

from pipeline import ImageError, image_key, sniff_format, timings

IDENTIFY = [
    "identify",
    "-ping",
    "-format",
    "format=%m\nwidth=%w\nheight=%h\ndepth=%z\ncolorspace=%[colorspace]\nquality=%Q\n"
    "orientation=%[orientation]\n%[EXIF:*]",
]
IDENTIFY_TIMEOUT_S = 20


def identify(data: bytes, fmt: str, context) -> dict[str, str]:
    """ImageMagick's view of the picture as {property: value}; EXIF tags as "exif:<Tag>"."""
    try:  # the coder prefix keeps ImageMagick to the format we sniffed, whatever else the bytes claim to be
        r = subprocess.run([*IDENTIFY, f"{fmt.lower()}:-"], input=data, capture_output=True, timeout=IDENTIFY_TIMEOUT_S)
    except FileNotFoundError:
        raise RuntimeError(
            "ImageMagick's identify is not installed in this sandbox: the sandbox image needs the "
            "Debian package imagemagick (apt-get install imagemagick where you emulate)"
        ) from None
    stderr = r.stderr.decode(errors="replace").strip()
    if r.returncode != 0:
        raise ImageError(
            f"ImageMagick could not read the {fmt} picture (identify exited {r.returncode}): {stderr[-500:]}"
        )
    if stderr:
        context.log(f"identify: {stderr[-500:]}", "WARNING")
    props: dict[str, str] = {}
    last = None
    for line in r.stdout.decode(errors="replace").split("\n"):
        key, sep, value = line.partition("=")
        if sep and key and " " not in key:
            props[key], last = value, key
        elif last is not None:  # a value with a line break in it
            props[last] += "\n" + line
    return props


def handle(event, context):
    start = time.time_ns()
    if not isinstance(event, dict) or not isinstance(event.get("image"), str):
        raise ImageError('expected {"image": "<the picture, base64>", "name": "<file name>"}')
    try:
        data = base64.b64decode(event["image"], validate=True)
    except binascii.Error as e:
        raise ImageError(f"image is not valid base64 ({e}); send the picture's bytes base64-encoded") from None
    name = str(event.get("name") or "image")
    fmt = sniff_format(data)
    props = identify(data, fmt, context)
    key = image_key(context.get_execution_id())
    context.put(key, data)
    context.log(f"{name}: {fmt}, {len(data)} bytes, {len(props)} properties")
    out = {"name": name, "image_key": key, "bytes": len(data), "identify": props}
    return out | {"timings": timings({}, context, start)}
