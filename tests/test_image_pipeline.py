"""The image-pipeline example (paper §6.6, Figure 7): its torch checkpoint reader, the numpy MobileNetV2 on real
photos, and the four grains end to end in the emulator.

The weights and photos are not in git: examples/image-pipeline/fetch.sh downloads them (the tests that need
them skip, saying so, until it has run). The emulator test also needs ImageMagick's identify.
"""

from __future__ import annotations

import base64
import io
import json
import pickle
import re
import shutil
import sys
import types
import zipfile
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from grainworker.datalayer import DataLayerClient
from sandclient._bundle import bundle
from sandemu import Emulator, load_app

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "examples" / "image-pipeline"
PTH = APP / ".fetched" / "mobilenet_v2-b0353104.pth"
PHOTOS = APP / ".fetched" / "photos"
PHOTO_NAMES = ("dog", "eagle", "giraffe", "horses", "kite", "person", "scream")
FETCHED = (
    PTH.is_file() and (APP / "weights.npz").is_file() and all((PHOTOS / f"{n}.jpg").is_file() for n in PHOTO_NAMES)
)
needs_fetch = pytest.mark.skipif(
    not FETCHED,
    reason="the MobileNetV2 weights and the sample photos are not in git: "
    "run examples/image-pipeline/fetch.sh once (downloads about 16 MB)",
)
needs_identify = pytest.mark.skipif(
    shutil.which("identify") is None, reason="ImageMagick's identify is not installed: apt-get install imagemagick"
)

DOGS = range(151, 269)  # ImageNet-1k's dog breeds
# (photo, top-1 class, classes the top 5 must include), as the float32 network predicts them; ImageNet-1k has no
# giraffe (darknet's giraffe.jpg also shows a zebra) nor a horse but "sorrel"
EXPECTED = [
    ("dog", 249, {249, 248, 250}),  # Alaskan Malamute, husky, Siberian Husky (+ dog sled, tandem bicycle)
    ("eagle", 22, {22, 21, 23}),  # bald eagle, kite (bird of prey), vulture
    ("giraffe", 340, {340, 352}),  # zebra, impala
    ("horses", 345, {345, 346, 349}),  # ox, water buffalo, bighorn sheep
    ("kite", 701, {701, 978}),  # parachute, beach
    ("person", 212, {212, 216, 219, 217}),  # English Setter, Clumber / Cocker / English Springer Spaniel
]


@pytest.fixture(scope="module")
def app_modules() -> Iterator[tuple[Any, Any]]:
    """The example's mobilenet and pth modules (imported from its folder, as its grains import them)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(APP))
        import mobilenet
        import pth

        yield mobilenet, pth


@pytest.fixture(scope="module")
def state_dict(app_modules: tuple[Any, Any]) -> dict[str, np.ndarray]:
    if not FETCHED:
        pytest.skip("run examples/image-pipeline/fetch.sh first (weights and photos are not in git)")
    return app_modules[1].load_state_dict(PTH)


@pytest.fixture(scope="module")
def net(app_modules: tuple[Any, Any], state_dict: dict[str, np.ndarray]) -> Any:
    return app_modules[0].MobileNetV2(state_dict)


def _photo(name: str) -> Image.Image:
    return Image.open(PHOTOS / f"{name}.jpg")


# ---- the checkpoint reader


@needs_fetch
def test_pth_reader_reads_torchvisions_legacy_checkpoint(state_dict: dict[str, np.ndarray]) -> None:
    assert len(state_dict) == 314
    shapes = {
        "features.0.0.weight": (32, 3, 3, 3),
        "features.0.1.running_var": (32,),
        "features.1.conv.0.0.weight": (32, 1, 3, 3),
        "features.2.conv.0.0.weight": (96, 16, 1, 1),
        "features.17.conv.2.weight": (320, 960, 1, 1),
        "features.18.0.weight": (1280, 320, 1, 1),
        "classifier.1.weight": (1000, 1280),
        "classifier.1.bias": (1000,),
        "features.0.1.num_batches_tracked": (),
    }
    assert {k: state_dict[k].shape for k in shapes} == shapes
    assert state_dict["features.0.0.weight"].dtype == np.float32
    assert state_dict["features.0.1.num_batches_tracked"].dtype == np.int64
    learnable = sum(a.size for k, a in state_dict.items() if not re.search(r"running_|num_batches", k))
    assert learnable == 3_504_872  # torchvision's documented parameter count of mobilenet_v2
    assert all(a.flags.c_contiguous and np.isfinite(a).all() for a in state_dict.values())
    assert min(a.min() for k, a in state_dict.items() if k.endswith("running_var")) > 0


class _Storage:
    def __init__(self, key: str, data: np.ndarray) -> None:
        self.key, self.data = key, data


def _torch_zip(
    path: Path, tensors: dict[str, tuple[_Storage, int, tuple[int, ...], tuple[int, ...]]], mp: pytest.MonkeyPatch
) -> None:
    """Write a checkpoint as torch >= 1.6 does (zip of data.pkl + data/<key>), without torch: stand-ins named
    torch.FloatStorage and torch._utils._rebuild_tensor_v2 make the pickle name the same globals."""
    torch, utils = types.ModuleType("torch"), types.ModuleType("torch._utils")
    float_storage = type("FloatStorage", (), {"__module__": "torch"})

    def _rebuild_tensor_v2(*args: Any) -> None: ...

    _rebuild_tensor_v2.__module__, _rebuild_tensor_v2.__qualname__ = "torch._utils", "_rebuild_tensor_v2"
    torch.FloatStorage, utils._rebuild_tensor_v2 = float_storage, _rebuild_tensor_v2
    torch._utils = utils
    mp.setitem(sys.modules, "torch", torch)
    mp.setitem(sys.modules, "torch._utils", utils)

    class Tensor:
        def __init__(self, storage: _Storage, offset: int, shape: tuple[int, ...], stride: tuple[int, ...]) -> None:
            self.args = (storage, offset, shape, stride, False, OrderedDict())

        def __reduce__(self) -> Any:
            return _rebuild_tensor_v2, self.args

    class Pickler(pickle.Pickler):
        def persistent_id(self, obj: Any) -> Any:
            if isinstance(obj, _Storage):
                return "storage", float_storage, obj.key, "cpu", obj.data.size
            return None

    buf = io.BytesIO()
    Pickler(buf, protocol=2).dump(OrderedDict((k, Tensor(*v)) for k, v in tensors.items()))
    storages = {s.key: s for s, *_ in tensors.values()}
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", buf.getvalue())
        z.writestr("archive/byteorder", "little")
        for s in storages.values():
            z.writestr(f"archive/data/{s.key}", s.data.astype("<f4").tobytes())


def test_pth_reader_reads_the_zip_format_with_strides_and_shared_storage(
    app_modules: tuple[Any, Any], tmp_path: Path
) -> None:
    pth = app_modules[1]
    data = np.arange(24, dtype=np.float32)
    s = _Storage("0", data)
    with pytest.MonkeyPatch.context() as mp:
        _torch_zip(
            tmp_path / "m.pth",
            {
                "a": (s, 0, (2, 3), (3, 1)),
                "a_t": (s, 0, (3, 2), (1, 3)),
                "tail": (s, 20, (4,), (1,)),
                "scalar": (s, 5, (), ()),
            },
            mp,
        )
    sd = pth.load_state_dict(tmp_path / "m.pth")
    assert list(sd) == ["a", "a_t", "tail", "scalar"]
    np.testing.assert_array_equal(sd["a"], data[:6].reshape(2, 3))
    np.testing.assert_array_equal(sd["a_t"], data[:6].reshape(2, 3).T)
    np.testing.assert_array_equal(sd["tail"], [20, 21, 22, 23])
    assert sd["scalar"].shape == () and sd["scalar"] == 5
    with pytest.MonkeyPatch.context() as mp:  # a tensor reaching past its storage is refused, not read
        _torch_zip(tmp_path / "bad.pth", {"a": (s, 20, (5,), (1,))}, mp)
    with pytest.raises(pth.CheckpointError, match="reaches element 24 but the storage holds 24"):
        pth.load_state_dict(tmp_path / "bad.pth")


def test_pth_reader_runs_no_code_from_the_checkpoint(app_modules: tuple[Any, Any], tmp_path: Path) -> None:
    pth = app_modules[1]

    class Evil:
        def __reduce__(self) -> Any:
            return print, ("pwned",)

    with zipfile.ZipFile(tmp_path / "evil.pth", "w") as z:
        z.writestr("archive/data.pkl", pickle.dumps(OrderedDict(w=Evil()), protocol=2))
    with pytest.raises(pth.CheckpointError, match=r"names the global \S+\.print, .*refused"):
        pth.load_state_dict(tmp_path / "evil.pth")
    (tmp_path / "junk.pth").write_bytes(b"not a checkpoint")
    with pytest.raises(pth.CheckpointError, match="neither a zip nor a legacy"):
        pth.load_state_dict(tmp_path / "junk.pth")


# ---- preprocessing and the network


def test_preprocess_is_torchvisions_resize_centercrop_normalize(app_modules: tuple[Any, Any]) -> None:
    mobilenet = app_modules[0]
    rng = np.random.default_rng(0)
    # 301x200: Resize(256) makes it int(256 * 301 / 200) = 385 x 256; CenterCrop(224) takes left round(80.5) = 80
    # (Python rounds half to even), top 16
    image = Image.fromarray(rng.integers(0, 256, (200, 301, 3), dtype=np.uint8))
    expected = np.asarray(image.resize((385, 256), Image.Resampling.BILINEAR).crop((80, 16, 304, 240)), np.float32)
    expected = ((expected / 255 - [0.485, 0.456, 0.406]) / [0.229, 0.224, 0.225]).transpose(2, 0, 1)
    x = mobilenet.preprocess(image)
    assert x.shape == (3, 224, 224) and x.dtype == np.float32
    np.testing.assert_allclose(x, expected, rtol=0, atol=1e-6)
    grey = Image.fromarray(rng.integers(0, 256, (256, 300), dtype=np.uint8))  # no resize, converted to RGB
    y = mobilenet.preprocess(grey)
    np.testing.assert_allclose(y[0] * 0.229 + 0.485, y[2] * 0.225 + 0.406, atol=1e-6)
    np.testing.assert_allclose(y[1, 0, 0] * 0.224 + 0.456, np.asarray(grey)[16, 38] / 255, atol=1e-6)


def _naive_forward(sd: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """torchvision's MobileNetV2 forward written plainly in float64, channels first, from the state_dict's own
    structure: a second implementation to check mobilenet.py's stride tricks against."""
    p = {k: v.astype(np.float64) for k, v in sd.items()}

    def conv(x: np.ndarray, w: np.ndarray, stride: int = 1) -> np.ndarray:
        groups = x.shape[0] // w.shape[1]
        k = w.shape[2]
        pad = k // 2
        xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad)))
        ho, wo = (x.shape[1] + 2 * pad - k) // stride + 1, (x.shape[2] + 2 * pad - k) // stride + 1
        xg = xp.reshape(groups, w.shape[1], *xp.shape[1:])
        wg = w.reshape(groups, w.shape[0] // groups, w.shape[1], k, k)
        out = np.zeros((groups, wg.shape[1], ho, wo))
        for i in range(k):
            for j in range(k):
                patch = xg[:, :, i : i + stride * ho : stride, j : j + stride * wo : stride]
                out += np.einsum("goc,gchw->gohw", wg[:, :, :, i, j], patch)
        return out.reshape(-1, ho, wo)

    def bn(x: np.ndarray, name: str) -> np.ndarray:
        m, v, g, b = (p[f"{name}.{s}"][:, None, None] for s in ("running_mean", "running_var", "weight", "bias"))
        return (x - m) / np.sqrt(v + 1e-5) * g + b

    def relu6(x: np.ndarray) -> np.ndarray:
        return np.minimum(np.maximum(x, 0), 6)

    x = relu6(bn(conv(x, p["features.0.0.weight"], 2), "features.0.1"))
    for i in range(1, 18):
        c = f"features.{i}.conv"
        stride = 2 if i in (2, 4, 7, 14) else 1
        y = x
        if f"{c}.3.weight" in p:  # expansion 6: 1x1, BN, ReLU6, then the depthwise part
            y = relu6(bn(conv(y, p[f"{c}.0.0.weight"]), f"{c}.0.1"))
            dw, project = f"{c}.1", (f"{c}.2", f"{c}.3")
        else:
            dw, project = f"{c}.0", (f"{c}.1", f"{c}.2")
        y = relu6(bn(conv(y, p[f"{dw}.0.weight"], stride), f"{dw}.1"))
        y = bn(conv(y, p[f"{project[0]}.weight"]), project[1])
        x = x + y if y.shape == x.shape else y
    x = relu6(bn(conv(x, p["features.18.0.weight"]), "features.18.1"))
    return p["classifier.1.weight"] @ x.mean(axis=(1, 2)) + p["classifier.1.bias"]


@needs_fetch
def test_network_agrees_with_a_plain_float64_implementation(
    app_modules: tuple[Any, Any], net: Any, state_dict: dict[str, np.ndarray]
) -> None:
    x = app_modules[0].preprocess(_photo("eagle"))
    fast, plain = net.logits(x), _naive_forward(state_dict, x.astype(np.float64))
    assert fast.shape == (1000,) and fast.dtype == np.float32
    np.testing.assert_allclose(fast, plain, rtol=0, atol=2e-3 * np.abs(plain).max())
    assert np.argsort(-fast)[:5].tolist() == np.argsort(-plain)[:5].tolist()


@needs_fetch
@pytest.mark.parametrize(("photo", "top1", "in_top5"), EXPECTED, ids=[e[0] for e in EXPECTED])
def test_top5_on_real_photos(net: Any, photo: str, top1: int, in_top5: set[int]) -> None:
    best = net.classify(_photo(photo))
    ids = [i for i, _ in best]
    assert ids[0] == top1, best
    assert in_top5 <= set(ids), best
    assert best[0][1] > 0.2 and all(a[1] >= b[1] for a, b in zip(best, best[1:], strict=False))
    if photo in ("dog", "person"):
        assert sum(i in DOGS for i in ids) >= 3


@needs_fetch
def test_float16_weights_npz_classifies_as_the_checkpoint(app_modules: tuple[Any, Any], net: Any) -> None:
    mobilenet = app_modules[0]
    half = mobilenet.MobileNetV2(mobilenet.load_params(APP / "weights.npz"))
    for photo in PHOTO_NAMES:
        x = mobilenet.preprocess(_photo(photo))
        a, b = mobilenet.top_k(net.logits(x), 5), mobilenet.top_k(half.logits(x), 5)
        assert [i for i, _ in a] == [i for i, _ in b], photo
        assert max(abs(p - q) for (_, p), (_, q) in zip(a, b, strict=True)) < 0.01, photo


# ---- the application


@needs_fetch
def test_the_entry_grains_upload_fits_the_frontends_body_limit() -> None:
    """`sand deploy` uploads weights.npz in the entry grain's zip; float32 weights (13 MB zipped) would get 413."""
    row = next(
        line for line in (ROOT / "docs" / "config.md").read_text().splitlines() if line.startswith("| `max.body.bytes`")
    )
    limit = int(re.search(r"\| `(\d+)` \|", row).group(1))
    uploads = bundle(APP, load_app(APP))
    entry = uploads[0]
    assert entry.resource == "extract_metadata" and "weights.npz" in entry.files
    assert "requirements.txt" in entry.files and not any(f.startswith(".") for f in entry.files)
    assert len(entry.body) < limit - 1024 * 1024, f"{len(entry.body)} bytes, limit {limit}"


def _request(photo: str) -> dict[str, str]:
    return {"name": f"{photo}.jpg", "image": base64.b64encode((PHOTOS / f"{photo}.jpg").read_bytes()).decode()}


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    if not FETCHED:
        pytest.skip("run examples/image-pipeline/fetch.sh first (weights and photos are not in git)")
    if shutil.which("identify") is None:
        pytest.skip("ImageMagick's identify is not installed: apt-get install imagemagick")
    with Emulator(APP, echo=lambda line: None) as e:
        yield e


@needs_fetch
@needs_identify
def test_pipeline_end_to_end_in_the_emulator(emulator: Emulator) -> None:
    result, run = emulator.invoke(_request("dog"), timeout_s=120)  # the first waits for the workers to start
    grains = ["extract_metadata", "verify_metadata", "recognize_objects", "make_thumbnail"]
    assert [r["grain"] for r in emulator.reports if r["execution_id"] == run] == grains
    assert result["name"] == "dog.jpg" and result["warnings"] == []
    assert result["metadata"] == {
        "format": "JPEG",
        "width": 768,
        "height": 576,
        "bytes": 163759,
        "depth": 8,
        "colorspace": "sRGB",
        "quality": 93,
        "orientation": "TopLeft",
        "camera": {"make": "Canon", "model": "Canon PowerShot S95"},
        "taken": "2014-09-19T16:08:30",
        "exposure": {"time": "1/80", "f_number": 4, "iso": 250, "focal_length_mm": 6},
    }
    assert [o["class_id"] for o in result["objects"]][:1] == [249]
    assert result["objects"][0]["label"] == "Alaskan Malamute" and result["objects"][2]["label"] == "dog sled"
    assert result["thumbnail"] == {
        "key": f"thumbnail/{run}",
        "width": 250,
        "height": 188,
        "bytes": result["thumbnail"]["bytes"],
    }
    assert result["metadata_key"] == f"metadata/{run}"
    # every grain recorded its own start and end, in workflow order
    t = result["timings"]
    assert [x["grain"] for x in t] == grains
    assert all(x["start_ns"] <= x["end_ns"] for x in t)
    assert all(a["end_ns"] <= b["start_ns"] for a, b in zip(t, t[1:], strict=False))
    # the data layer keeps the thumbnail and the record, not the picture (the Emulator has no public data-layer
    # client: the test acts for the application with its credential)
    with DataLayerClient(emulator.data_address, emulator._app_cred) as data:
        thumb = data.get(f"thumbnail/{run}")
        record = json.loads(data.get(f"metadata/{run}"))
        assert data.get(f"image/{run}") is None
    assert thumb[:3] == b"\xff\xd8\xff" and len(thumb) == result["thumbnail"]["bytes"]
    assert record == {k: result[k] for k in ("name", "metadata", "objects", "thumbnail")}


@needs_fetch
@needs_identify
def test_pipeline_on_every_photo(emulator: Emulator) -> None:
    results = {p: emulator.invoke(_request(p), timeout_s=120)[0] for p in PHOTO_NAMES}
    for photo, top1, _ in EXPECTED:
        assert results[photo]["objects"][0]["class_id"] == top1, photo
    assert results["eagle"]["objects"][0]["label"] == "bald eagle"
    assert results["eagle"]["metadata"]["camera"] == {"make": "PENTAX", "model": "PENTAX K-5"}  # EXIF pads these
    assert results["kite"]["metadata"]["taken"] == "2010-06-06T12:27:25"  # DateTimeOriginal, not the edit's
    for no_exif in ("giraffe", "scream"):
        m = results[no_exif]["metadata"]
        assert m["camera"] is None and m["taken"] is None and m["exposure"] is None, no_exif
    assert {p: (r["thumbnail"]["width"], r["thumbnail"]["height"]) for p, r in results.items()} == {
        "dog": (250, 188),
        "eagle": (250, 166),
        "giraffe": (250, 250),
        "horses": (250, 166),
        "kite": (250, 166),
        "person": (250, 166),
        "scream": (196, 250),
    }


@needs_fetch
@needs_identify
def test_a_png_with_transparency_goes_through(emulator: Emulator) -> None:
    buf = io.BytesIO()
    with Image.open(PHOTOS / "eagle.jpg") as photo:
        rgba = photo.convert("RGBA")
    rgba.putalpha(128)
    rgba.save(buf, "PNG")
    result, _ = emulator.invoke({"name": "eagle.png", "image": base64.b64encode(buf.getvalue()).decode()})
    m = result["metadata"]
    assert (m["format"], m["width"], m["height"], m["camera"], m["taken"]) == ("PNG", 773, 512, None, None)
    assert result["objects"][0]["label"] == "bald eagle"  # classified as RGB, as torchvision's loader converts
    assert (result["thumbnail"]["width"], result["thumbnail"]["height"]) == (250, 166)


@needs_fetch
@needs_identify
def test_bad_pictures_end_with_an_image_error(emulator: Emulator) -> None:
    not_base64, _ = emulator.invoke({"image": "%%%"})
    text, _ = emulator.invoke({"image": base64.b64encode(b"hello, not a picture").decode()})
    truncated, _ = emulator.invoke({"image": base64.b64encode((PHOTOS / "dog.jpg").read_bytes()[:64]).decode()})
    assert not_base64["error"]["type"] == "ImageError" and "base64" in not_base64["error"]["message"]
    assert text["error"] == {
        "type": "ImageError",
        "grain": "extract_metadata",
        "message": "the picture is not JPEG, PNG, GIF or WebP (it starts with 68656c6c6f2c206e); send one of those",
    }
    assert truncated["error"]["type"] == "ImageError" and truncated["error"]["grain"] == "extract_metadata"


# ---- benchmarks/image_pipeline.py (paper Fig 7): its arithmetic, and the pipeline on the warm baseline ------------


def _timings(*durations_ms: float, gap_ms: float = 2.0) -> list[dict[str, Any]]:
    grains = ["extract_metadata", "verify_metadata", "recognize_objects", "make_thumbnail"]
    out, t = [], 1_000_000_000
    for g, d in zip(grains, durations_ms, strict=True):
        out.append({"grain": g, "start_ns": t, "end_ns": t + int(d * 1e6)})
        t += int((d + gap_ms) * 1e6)
    return out


def test_the_benchmark_splits_a_run_into_compute_and_overhead() -> None:
    from benchmarks.image_pipeline import split, summarize

    row = split(150_000_000, {"timings": _timings(20, 1, 80, 30), "objects": [{"label": "a"}, {"label": "b"}]})
    assert row["total_ms"] == 150 and row["compute_ms"] == 131 and row["overhead_ms"] == 19
    assert row["between_grains_ms"] == [2, 2, 2] and row["grains_ms"]["recognize_objects"] == 80
    other = split(170_000_000, {"timings": _timings(20, 1, 90, 30, gap_ms=5)})
    s = summarize([row, other, split(160_000_000, {"timings": _timings(20, 1, 85, 30)})])
    assert s["total_ms"] == 160 and s["compute_ms"] == 136 and s["overhead_ms"] == 24 and s["n"] == 3
    assert (s["overhead_min_ms"], s["overhead_max_ms"]) == (19, 29)
    with pytest.raises(ValueError, match="timings name"):
        split(1, {"timings": _timings(1, 1, 1, 1)[::-1]})


@pytest.mark.e2e
@needs_fetch
def test_the_pipeline_runs_on_the_warm_baseline_as_zip_actions(kafka_bootstrap: str, sandbox_image: str) -> None:
    """The benchmark's baseline: the four grains as zip actions (packages from pip --target, weights.npz in
    recognize_objects'), the picture through the data-layer stand-in; the same answer as in the emulator."""
    import subprocess

    from benchmarks.baselines import WarmContainerPlatform
    from benchmarks.image_pipeline import GRAINS, image_python, packages, zips

    if (
        subprocess.run(
            ["docker", "run", "--rm", "--network", "none", sandbox_image, "identify", "-version"],
            capture_output=True,
            timeout=120,
        ).returncode
        != 0
    ):
        pytest.skip(f"{sandbox_image} has no ImageMagick: rebuild it with deploy/sandbox-image.sh")
    actions = zips(packages(image_python(sandbox_image)))
    with WarmContainerPlatform(bootstrap=kafka_bootstrap, image=sandbox_image, data_layer=True) as p:
        for g, archive in actions.items():
            p.deploy_zip(g, archive, entry=g)
        r = p.invoke(GRAINS, _request("dog"), timeout_s=300)
        assert r.ok, f"{r.error}\n{p.invoker_log()}"
        out = r.output
        assert out["metadata"]["camera"] == {"make": "Canon", "model": "Canon PowerShot S95"}
        assert out["objects"][0]["class_id"] == 249 and [t["grain"] for t in out["timings"]] == GRAINS
        assert (out["thumbnail"]["width"], out["thumbnail"]["height"]) == (250, 188)
        assert p.data_dir is not None
        left = sorted(f.name.split("%2F")[0] for f in p.data_dir.iterdir())
        assert left == ["metadata", "thumbnail"]  # the picture itself deleted by make_thumbnail
        again = p.invoke(GRAINS, _request("eagle"), timeout_s=120)
        assert again.ok and again.output["objects"][0]["label"] == "bald eagle", again.error
