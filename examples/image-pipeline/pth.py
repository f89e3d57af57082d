"""image-pipeline: read a PyTorch checkpoint (`torch.save` of a state_dict) into numpy arrays, without torch.

Not a grain: mobilenet.py uses it to convert the checkpoint into weights.npz (fetch.sh runs that once), and
the tests use it to check the conversion. Two file formats:

- legacy (torch < 1.6, e.g. torchvision's mobilenet_v2-b0353104.pth): five pickles in a row (magic number,
  protocol version 1001, system info, the state_dict, the list of storage keys), then each storage in the order
  of that list as an int64 element count followed by its raw bytes;
- zip (torch >= 1.6): `<name>/data.pkl` (the state_dict) and `<name>/data/<key>` (each storage's raw bytes),
  `<name>/byteorder` when not little-endian.

The state_dict pickle is read by a restricted Unpickler: it resolves only the globals a state_dict of tensors
needs (`collections.OrderedDict`, `torch._utils._rebuild_tensor_v2`/`_rebuild_parameter` and the storage types)
and refuses every other one, so a checkpoint cannot run code here. Each tensor becomes a C-contiguous numpy
array of its storage's dtype (the storage bytes are little-endian; checked against the file's own statement).
"""

from __future__ import annotations

import io
import pickle
import struct
import zipfile
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

__all__ = ["CheckpointError", "load_state_dict"]

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL = 1001
# torch storage type -> numpy dtype of its elements (little-endian)
STORAGE_DTYPES = {
    "DoubleStorage": "<f8",
    "FloatStorage": "<f4",
    "HalfStorage": "<f2",
    "LongStorage": "<i8",
    "IntStorage": "<i4",
    "ShortStorage": "<i2",
    "CharStorage": "i1",
    "ByteStorage": "u1",
    "BoolStorage": "?",
}


class CheckpointError(ValueError):
    """The file is not a state_dict checkpoint this reader understands; the message says why."""


@dataclass
class _Storage:
    key: str
    dtype: np.dtype
    numel: int
    data: np.ndarray | None = None  # filled once the storage's bytes are read


@dataclass(frozen=True)
class _StorageType:
    name: str


@dataclass
class _Tensor:
    """A tensor whose storage may not be read yet (legacy files put the storages after the pickle)."""

    storage: _Storage
    offset: int
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    storage_offset: int = 0  # element offset of a legacy storage view into its root storage

    def array(self) -> np.ndarray:
        s = self.storage
        if s.data is None:
            raise CheckpointError(f"storage {s.key!r} is referenced but its data is not in the file")
        start = self.storage_offset + self.offset
        if any(n < 0 for n in self.shape) or any(st < 0 for st in self.stride) or start < 0:
            raise CheckpointError(f"tensor on storage {s.key!r} has a negative size, stride or offset")
        last = start + sum((n - 1) * st for n, st in zip(self.shape, self.stride, strict=True))
        if 0 not in self.shape and last >= s.numel:
            raise CheckpointError(
                f"tensor of shape {self.shape} on storage {s.key!r} reaches element {last} but "
                f"the storage holds {s.numel}"
            )
        if 0 in self.shape:
            return np.zeros(self.shape, s.dtype)
        item = s.dtype.itemsize
        view = np.lib.stride_tricks.as_strided(
            s.data[start:], self.shape, tuple(st * item for st in self.stride), writeable=False
        )
        return np.array(view, order="C")  # a copy (np.ascontiguousarray would make a 0-d tensor 1-d)


def _rebuild_tensor_v2(
    storage: Any, storage_offset: int, size: tuple[int, ...], stride: tuple[int, ...], *_ignored: Any
) -> _Tensor:
    if isinstance(storage, _Tensor):  # a legacy storage view: (root storage, element offset) as a pseudo-tensor
        return _Tensor(storage.storage, storage_offset, tuple(size), tuple(stride), storage.storage_offset)
    if not isinstance(storage, _Storage):
        raise CheckpointError("a tensor's storage is not a storage reference")
    return _Tensor(storage, storage_offset, tuple(size), tuple(stride))


def _rebuild_parameter(data: Any, *_ignored: Any) -> Any:
    return data


ALLOWED_GLOBALS = {
    ("collections", "OrderedDict"): OrderedDict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
}


class _Unpickler(pickle.Unpickler):
    """Resolves only ALLOWED_GLOBALS and torch storage types; records every storage referenced in `storages`."""

    def __init__(self, f: BinaryIO, storages: dict[str, _Storage], legacy: bool) -> None:
        super().__init__(f)
        self.storages = storages
        self.legacy = legacy

    def find_class(self, module: str, name: str) -> Any:
        if module == "torch" and name in STORAGE_DTYPES:
            return _StorageType(name)
        if module == "torch" and name.endswith("Storage"):
            raise CheckpointError(
                f"tensors of torch.{name} are not supported (only {', '.join(STORAGE_DTYPES)}); "
                f"save the state_dict as float32 first"
            )
        if (module, name) in ALLOWED_GLOBALS:
            return ALLOWED_GLOBALS[(module, name)]
        raise CheckpointError(
            f"the checkpoint names the global {module}.{name}, which a state_dict of tensors does "
            f"not need; refused (this reader never runs code from a checkpoint)"
        )

    def persistent_load(self, pid: Any) -> Any:
        if not (isinstance(pid, tuple) and pid and pid[0] == "storage"):
            raise CheckpointError(f"unknown persistent id {pid!r:.80}")
        if self.legacy:  # ('storage', type, root key, location, numel, view metadata or None)
            _, stype, key, _location, numel, view = pid
        else:  # ('storage', type, key, location, numel)
            _, stype, key, _location, numel = pid
            view = None
        if not isinstance(stype, _StorageType):
            raise CheckpointError(f"storage {key!r} has an unknown type {stype!r:.80}")
        dtype = np.dtype(STORAGE_DTYPES[stype.name])
        storage = self.storages.setdefault(str(key), _Storage(str(key), dtype, int(numel)))
        if storage.dtype != dtype:
            raise CheckpointError(f"storage {key!r} is used as both {storage.dtype} and {dtype}")
        if view is not None:  # (view key, element offset, view numel): a tensor on a part of the root storage
            _view_key, offset, view_numel = view
            return _Tensor(storage, 0, (int(view_numel),), (1,), int(offset))
        return storage


def _arrays(obj: Any) -> dict[str, np.ndarray]:
    if not isinstance(obj, dict):
        raise CheckpointError(f"the checkpoint holds a {type(obj).__name__}, not a state_dict")
    out = {}
    for name, value in obj.items():
        if not isinstance(value, _Tensor):
            raise CheckpointError(f"state_dict entry {name!r} is a {type(value).__name__}, not a tensor")
        out[str(name)] = value.array()
    return out


def _load_legacy(f: BinaryIO) -> dict[str, np.ndarray]:
    plain = _HeaderUnpickler(f)  # the three header pickles hold only ints and a dict of ints/bools
    if plain.load() != LEGACY_MAGIC:
        raise CheckpointError("not a torch checkpoint: wrong magic number")
    if (version := plain.load()) != LEGACY_PROTOCOL:
        raise CheckpointError(f"legacy torch checkpoint of protocol {version}; only {LEGACY_PROTOCOL} is understood")
    sys_info = plain.load()
    if not sys_info.get("little_endian", True):
        raise CheckpointError("the checkpoint was written on a big-endian machine; not supported")
    storages: dict[str, _Storage] = {}
    obj = _Unpickler(f, storages, legacy=True).load()
    for key in _HeaderUnpickler(f).load():
        s = storages.get(str(key))
        if s is None:
            raise CheckpointError(f"the file holds data for storage {key!r}, which no tensor uses")
        (numel,) = struct.unpack("<q", f.read(8))
        if numel != s.numel:
            raise CheckpointError(f"storage {key!r} holds {numel} elements, the pickle said {s.numel}")
        raw = f.read(numel * s.dtype.itemsize)
        if len(raw) != numel * s.dtype.itemsize:
            raise CheckpointError(f"the file ends inside storage {key!r}: truncated download?")
        s.data = np.frombuffer(raw, s.dtype)
    return _arrays(obj)


def _load_zip(path: Path) -> dict[str, np.ndarray]:
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        pkl = next((n for n in names if n.endswith("/data.pkl") and n.count("/") == 1), None)
        if pkl is None:
            raise CheckpointError(f"{path} is a zip but holds no <name>/data.pkl: not a torch checkpoint")
        prefix = pkl[: -len("data.pkl")]
        if prefix + "byteorder" in names and z.read(prefix + "byteorder").strip() != b"little":
            raise CheckpointError("the checkpoint's storages are big-endian; not supported")
        storages: dict[str, _Storage] = {}
        obj = _Unpickler(io.BytesIO(z.read(pkl)), storages, legacy=False).load()
        for key, s in storages.items():
            try:
                raw = z.read(f"{prefix}data/{key}")
            except KeyError:
                raise CheckpointError(f"storage {key!r} is not in the zip ({prefix}data/{key})") from None
            if len(raw) < s.numel * s.dtype.itemsize:
                raise CheckpointError(f"storage {key!r} has {len(raw)} bytes, needs {s.numel * s.dtype.itemsize}")
            s.data = np.frombuffer(raw, s.dtype, count=s.numel)
    return _arrays(obj)


class _HeaderUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise CheckpointError(f"unexpected global {module}.{name} outside the state_dict; refused")


def load_state_dict(path: str | Path) -> dict[str, np.ndarray]:
    """The checkpoint's state_dict as {name: numpy array}, in the file's order."""
    path = Path(path)
    try:
        if zipfile.is_zipfile(path):
            return _load_zip(path)
        with open(path, "rb") as f:
            if f.read(2) != b"\x80\x02":
                raise CheckpointError(f"{path} is neither a zip nor a legacy (pickle protocol 2) torch checkpoint")
            f.seek(0)
            return _load_legacy(f)
    except CheckpointError:
        raise
    except (pickle.UnpicklingError, EOFError, struct.error, ValueError, TypeError, KeyError, zipfile.BadZipFile) as e:
        raise CheckpointError(f"{path}: not a readable torch checkpoint ({type(e).__name__}: {e})") from None
