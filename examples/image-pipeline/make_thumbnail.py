"""image-pipeline, grain 4 of 4: make a thumbnail and store it with the metadata in the data layer.

The thumbnail fits in THUMBNAIL pixels (aspect ratio kept, turned upright by the EXIF orientation), as JPEG
under pipeline.thumbnail_key; the record {"name", "metadata", "objects", "thumbnail"} as JSON under
pipeline.metadata_key. The picture's own copy in the data layer is deleted. Output (the workflow's answer): the
record plus "metadata_key", "warnings" and "timings" (one {"grain", "start_ns", "end_ns"} per grain).
"""

import io
import json
import time

from PIL import Image, ImageOps
from pipeline import metadata_key, read_image, thumbnail_key, timings

THUMBNAIL = (250, 250)
JPEG_QUALITY = 85


def thumbnail(data: bytes) -> Image.Image:
    with Image.open(io.BytesIO(data)) as image:
        image.thumbnail(THUMBNAIL)  # first: a JPEG is decoded at a fraction of its size (draft mode)
        return ImageOps.exif_transpose(image).convert("RGB")  # the box is square: turning after is the same


# Warm up once here, before the grain worker forks instances: Pillow loads its format plugins on the first open
# and save (~15 ms in every instance otherwise).
_sample = io.BytesIO()
Image.new("RGB", (320, 240)).save(_sample, "JPEG")
thumbnail(_sample.getvalue()).save(io.BytesIO(), "JPEG", quality=JPEG_QUALITY)


def handle(event, context):
    start = time.time_ns()
    run = context.get_execution_id()
    thumb = thumbnail(read_image(context, event["image_key"]))
    buf = io.BytesIO()
    thumb.save(buf, "JPEG", quality=JPEG_QUALITY)
    key = thumbnail_key(run)
    context.put(key, buf.getvalue())
    record = {
        "name": event["name"],
        "metadata": event["metadata"],
        "objects": event["objects"],
        "thumbnail": {"key": key, "width": thumb.width, "height": thumb.height, "bytes": buf.tell()},
    }
    context.put(metadata_key(run), json.dumps(record))
    context.delete(event["image_key"])
    context.log(f"thumbnail {thumb.width}x{thumb.height} ({buf.tell()} bytes) and metadata stored")
    out = record | {"metadata_key": metadata_key(run), "warnings": event["warnings"]}
    return out | {"timings": timings(event, context, start)}
