"""image-pipeline: torchvision's MobileNetV2 ImageNet classifier in numpy, with torchvision's preprocessing.

Not a grain: recognize_objects imports it (and loads weights.npz) once per grain worker, before any fork, so
every grain instance shares the network. The network is torchvision's `mobilenet_v2` (width 1.0): a 3x3 conv
(stride 2), 17 inverted residual blocks (1x1 expansion, 3x3 depthwise, 1x1 linear projection; a residual
connection where stride is 1 and the channels stay), a 1x1 conv to 1280 channels, global average pooling and a
linear layer to the 1000 ImageNet-1k classes; every conv is followed by batch norm (eval mode: running
statistics) and, but for the projections, ReLU6. Parameters keep torchvision's state_dict names, so
`pth.load_state_dict` of torchvision's checkpoint can be used as it is.

Activations are height x width x channels (float32): a 1x1 conv is one matrix product, the depthwise conv nine
shifted multiply-adds, the first conv a matrix product over 3x3 patches taken with stride tricks. One 224x224
image takes 35-60 ms on one CPU of the 2-vCPU test machine.

    python3 mobilenet.py convert mobilenet_v2-b0353104.pth weights.npz [--float32]
    python3 mobilenet.py classify weights.npz photo.jpg [...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from PIL import Image

__all__ = ["WEIGHTS", "MobileNetV2", "WeightsError", "load_params", "preprocess", "save_npz", "top_k"]

WEIGHTS = Path(__file__).with_name("weights.npz")  # written by fetch.sh
# torchvision's ImageNet evaluation transform: Resize(256), CenterCrop(224), ToTensor(), Normalize(MEAN, STD)
RESIZE, CROP = 256, 224
MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)
BN_EPS = 1e-5
# torchvision's inverted residual settings: expansion t, output channels c, blocks n, stride s of the first
SETTINGS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))
STEM, LAST, CLASSES = 32, 1280, 1000


class WeightsError(ValueError):
    """The parameters do not fit torchvision's MobileNetV2; the message names the parameter."""


def preprocess(image: Image.Image) -> np.ndarray:
    """The normalised 3x224x224 float32 array torchvision's ImageNet evaluation transform makes of the image
    (RGB, as its image loader converts): the shorter side resized to 256 with PIL's bilinear filter (the longer
    side int(256 * long / short), no resize when it is 256 already), the centre 224x224 cropped (offsets
    rounded as Python rounds), scaled to [0, 1], normalised per channel."""
    image = image.convert("RGB")
    w, h = image.size
    short, long = (w, h) if w <= h else (h, w)
    new_short, new_long = RESIZE, int(RESIZE * long / short)
    new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    if (new_w, new_h) != (w, h):
        image = image.resize((new_w, new_h), Image.Resampling.BILINEAR)
    top, left = int(round((new_h - CROP) / 2.0)), int(round((new_w - CROP) / 2.0))
    x = np.asarray(image.crop((left, top, left + CROP, top + CROP)), np.float32) / 255
    return ((x - MEAN) / STD).transpose(2, 0, 1)


def _patches3x3(x: np.ndarray, stride: int) -> np.ndarray:
    """(H', W', C*9) patches of the zero-padded (H, W, C) input, in torch's weight order (c, i, j)."""
    xp = np.pad(x, ((1, 1), (1, 1), (0, 0)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(0, 1))[::stride, ::stride]  # H', W', C, 3, 3
    return win.reshape(win.shape[0], win.shape[1], -1)


def _depthwise3x3(x: np.ndarray, w: np.ndarray, stride: int) -> np.ndarray:
    """3x3 conv of each channel with its own kernel (w: 3, 3, C), zero padding 1."""
    h, wd, _ = x.shape
    ho, wo = (h - 1) // stride + 1, (wd - 1) // stride + 1
    xp = np.pad(x, ((1, 1), (1, 1), (0, 0)))
    out = xp[0 : stride * (ho - 1) + 1 : stride, 0 : stride * (wo - 1) + 1 : stride] * w[0, 0]
    for i in range(3):
        for j in range(3):
            if i or j:
                out += xp[i : i + stride * (ho - 1) + 1 : stride, j : j + stride * (wo - 1) + 1 : stride] * w[i, j]
    return out


class _Block:
    """An inverted residual block: [1x1 expand, BN, ReLU6], 3x3 depthwise, BN, ReLU6, 1x1 project, BN, [+ input]."""

    def __init__(self, net: MobileNetV2, prefix: str, inp: int, out: int, t: int, stride: int) -> None:
        hidden, n = inp * t, 0
        self.expand = None
        if t != 1:
            self.expand = (net.conv1x1(f"{prefix}.{n}.0", inp, hidden), net.bn(f"{prefix}.{n}.1", hidden))
            n += 1
        self.dw = (net.depthwise(f"{prefix}.{n}.0", hidden), net.bn(f"{prefix}.{n}.1", hidden))
        self.project = (net.conv1x1(f"{prefix}.{n + 1}", hidden, out), net.bn(f"{prefix}.{n + 2}", out))
        self.stride, self.residual = stride, stride == 1 and inp == out

    def __call__(self, x: np.ndarray) -> np.ndarray:
        y = x
        if self.expand:
            y = _relu6(_bn(y @ self.expand[0], self.expand[1]))
        y = _relu6(_bn(_depthwise3x3(y, self.dw[0], self.stride), self.dw[1]))
        y = _bn(y @ self.project[0], self.project[1])
        return y + x if self.residual else y


def _bn(x: np.ndarray, scale_shift: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    x *= scale_shift[0]
    x += scale_shift[1]
    return x


def _relu6(x: np.ndarray) -> np.ndarray:
    return np.clip(x, 0, 6, out=x)


class MobileNetV2:
    """The network, built from torchvision state_dict names -> arrays (any float dtype; computed in float32)."""

    def __init__(self, params: dict[str, np.ndarray]) -> None:
        self.params = params
        self.stem = (
            self._weight("features.0.0.weight", (STEM, 3, 3, 3)).reshape(STEM, 27).T.copy(),
            self.bn("features.0.1", STEM),
        )
        self.blocks, inp, i = [], STEM, 1
        for t, c, n, s in SETTINGS:
            for k in range(n):
                self.blocks.append(_Block(self, f"features.{i}.conv", inp, c, t, s if k == 0 else 1))
                inp, i = c, i + 1
        self.head = (self.conv1x1(f"features.{i}.0", inp, LAST), self.bn(f"features.{i}.1", LAST))
        self.fc = (
            self._weight("classifier.1.weight", (CLASSES, LAST)).T.copy(),
            self._weight("classifier.1.bias", (CLASSES,)),
        )

    def _weight(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        if name not in self.params:
            raise WeightsError(f"parameter {name} is missing: not torchvision's mobilenet_v2 state_dict")
        a = self.params[name]
        if a.shape != shape:
            raise WeightsError(f"parameter {name} has shape {a.shape}, torchvision's mobilenet_v2 has {shape}")
        return np.asarray(a, np.float32)

    def conv1x1(self, prefix: str, inp: int, out: int) -> np.ndarray:
        return self._weight(f"{prefix}.weight", (out, inp, 1, 1))[:, :, 0, 0].T.copy()  # (inp, out)

    def depthwise(self, prefix: str, channels: int) -> np.ndarray:
        return self._weight(f"{prefix}.weight", (channels, 1, 3, 3))[:, 0].transpose(1, 2, 0).copy()  # (3, 3, C)

    def bn(self, prefix: str, channels: int) -> tuple[np.ndarray, np.ndarray]:
        """Batch norm in eval mode as torch computes it: x * (w / sqrt(var + eps)) + (b - mean * that)."""
        w, b, mean, var = (
            self._weight(f"{prefix}.{p}", (channels,)) for p in ("weight", "bias", "running_mean", "running_var")
        )
        scale = w / np.sqrt(var + np.float32(BN_EPS))
        return scale, b - mean * scale

    def logits(self, x: np.ndarray) -> np.ndarray:
        """The 1000 class scores of one preprocessed 3xHxW image."""
        x = np.ascontiguousarray(np.asarray(x, np.float32).transpose(1, 2, 0))
        x = _relu6(_bn(_patches3x3(x, 2) @ self.stem[0], self.stem[1]))
        for block in self.blocks:
            x = block(x)
        x = _relu6(_bn(x @ self.head[0], self.head[1]))
        return x.mean(axis=(0, 1)) @ self.fc[0] + self.fc[1]

    def classify(self, image: Image.Image, k: int = 5) -> list[tuple[int, float]]:
        """The k most probable ImageNet-1k classes of the image: [(class id, probability)], most probable first."""
        return top_k(self.logits(preprocess(image)), k)


def top_k(logits: np.ndarray, k: int) -> list[tuple[int, float]]:
    p = np.exp(logits.astype(np.float64) - logits.max())
    p /= p.sum()
    best = np.argsort(-p, kind="stable")[:k]
    return [(int(i), float(p[i])) for i in best]


def load_params(path: str | Path) -> dict[str, np.ndarray]:
    """Parameters from weights.npz (save_npz), or straight from a torch checkpoint (.pth, via pth.py)."""
    path = Path(path)
    if path.suffix == ".npz":
        with np.load(path) as z:
            return {name: z[name] for name in z.files}
    from pth import load_state_dict

    return load_state_dict(path)


def save_npz(params: dict[str, np.ndarray], path: str | Path, half: bool = True) -> None:
    """Write the parameters the network uses; with `half`, conv and linear weights as float16 (half the size;
    batch norm statistics and biases stay float32). Loading turns everything into float32 again."""
    keep = {}
    for name, a in params.items():
        if name.endswith("num_batches_tracked"):
            continue
        keep[name] = a.astype(np.float16 if half and a.ndim >= 2 else np.float32)
    MobileNetV2(keep)  # refuse to write parameters the network cannot use
    np.savez(path, **keep)


def _main(argv: list[str]) -> int:
    if len(argv) >= 3 and argv[0] == "convert":
        save_npz(load_params(argv[1]), argv[2], half="--float32" not in argv[3:])
        return 0
    if len(argv) >= 3 and argv[0] == "classify":
        net = MobileNetV2(load_params(argv[1]))
        for photo in argv[2:]:
            with Image.open(photo) as im:
                print(photo, " ".join(f"{i}:{p:.4f}" for i, p in net.classify(im)))
        return 0
    print(__doc__.rsplit("\n\n", 1)[-1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
