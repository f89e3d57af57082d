"""image-pipeline, grain 2 of 4: verify ImageMagick's metadata and keep the part the application stores.

Checks that ImageMagick read the picture as one of the accepted formats and that it has a size (at most
pipeline.MAX_PIXELS pixels); a picture that fails ends the execution with an ImageError, and its copy in the
data layer is deleted. Keeps format, width, height, bytes, depth, colour space, JPEG quality and orientation,
and from EXIF (when present and well-formed) the camera's make and model, when the photo was taken (ISO 8601)
and the exposure. Output to recognize_objects: {"name", "image_key", "metadata", "warnings", "timings"}.
"""

import time
from datetime import datetime
from fractions import Fraction

from pipeline import FORMATS, MAX_PIXELS, ImageError, timings

KNOWN_FORMATS = {*FORMATS.values(), "WEBP"}
EXIF_TIME = "%Y:%m:%d %H:%M:%S"
# strptime imports its machinery on first use: do it here, once per grain worker, not in every instance (5 ms)
datetime.strptime("2000:01:01 00:00:00", EXIF_TIME)


def _number(text: str | None) -> int | float | None:
    """An EXIF rational ("13/1", "15157/2048") or integer as a number (an int when whole); None when absent or
    malformed."""
    try:
        f = Fraction(text.strip()) if text else None
    except (ValueError, ZeroDivisionError):
        return None
    return None if f is None else int(f) if f.denominator == 1 else round(float(f), 4)


def _int(props: dict[str, str], key: str) -> int:
    try:
        return int(props[key])
    except (KeyError, ValueError):
        raise ImageError(f"ImageMagick gave no {key} for the picture ({props.get(key)!r})") from None


def verify(props: dict[str, str], size: int, warnings: list[str]) -> dict:
    fmt = props.get("format")
    if fmt not in KNOWN_FORMATS:
        raise ImageError(f"ImageMagick read the picture as {fmt!r}; the pipeline takes {sorted(KNOWN_FORMATS)}")
    width, height = _int(props, "width"), _int(props, "height")
    if width <= 0 or height <= 0 or width * height > MAX_PIXELS:
        raise ImageError(f"the picture is {width}x{height}; it must have between 1 and {MAX_PIXELS} pixels")
    exif = {k.removeprefix("exif:"): v.strip() for k, v in props.items() if k.startswith("exif:")}
    make, model = exif.get("Make"), exif.get("Model")
    taken = None
    if stamp := exif.get("DateTimeOriginal") or exif.get("DateTime"):
        try:
            taken = datetime.strptime(stamp, EXIF_TIME).isoformat()
        except ValueError:
            warnings.append(f"EXIF time {stamp!r} is not YYYY:MM:DD HH:MM:SS; dropped")
    for axis, pixels in (("X", width), ("Y", height)):
        stated = exif.get(f"Pixel{axis}Dimension")
        if stated and stated != str(pixels):
            warnings.append(f"EXIF Pixel{axis}Dimension {stated} differs from the picture's {pixels}")
    exposure = {
        "time": exif.get("ExposureTime"),
        "f_number": _number(exif.get("FNumber")),
        "iso": _number(exif.get("PhotographicSensitivity") or exif.get("ISOSpeedRatings")),
        "focal_length_mm": _number(exif.get("FocalLength")),
    }
    exposure = {k: v for k, v in exposure.items() if v is not None}
    return {
        "format": fmt,
        "width": width,
        "height": height,
        "bytes": size,
        "depth": _number(props.get("depth")),
        "colorspace": props.get("colorspace"),
        "quality": _number(props.get("quality")),
        "orientation": props.get("orientation"),
        "camera": {"make": make, "model": model} if make or model else None,
        "taken": taken,
        "exposure": exposure or None,
    }


def handle(event, context):
    start = time.time_ns()
    warnings: list[str] = []
    try:
        metadata = verify(event["identify"], event["bytes"], warnings)
    except ImageError:
        context.delete(event["image_key"])  # the pipeline ends here: no grain will read the picture
        raise
    for w in warnings:
        context.log(w, "WARNING")
    out = {"name": event["name"], "image_key": event["image_key"], "metadata": metadata, "warnings": warnings}
    return out | {"timings": timings(event, context, start)}
