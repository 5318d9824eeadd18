#!/usr/bin/python3
"""Fixtures for tests/script_policy_fixtures.sh, written by the real libraries.

Usage: gen_policy_fixtures.py OUTDIR

OUTDIR/benign/  files real tools write that must never come out unsafe or invalid:
  quantized tensors (torch.save of quantize_per_tensor / quantize_per_channel), whole-module saves
  of every torch.nn.modules class that can be built with simple arguments, a Trainer
  training_args.bin, joblib.dump with compress=zlib/gzip/bz2/xz/lzma.
OUTDIR/evil/    the malicious counterparts, each calling os.system when loaded (the test checks
  with tests/loaders/reach.py that the real loader reaches it, and that stguard blocks it):
  xz/lzma/bz2/ZF joblib dumps, a TrainingArguments pickle with one os.system, an nn module with an
  extra attribute whose reduce is os.system.
OUTDIR/stub/    a stand-in `transformers` package (transformers is not in Debian): the classes
  torch.save(TrainingArguments) pickles, under their real module and class names, so the pickle
  is the one transformers writes and torch.load can import them.
Loader per file: the name's first word (torch_*, joblib_*, pickle_*). *_py311*: the enums as
Python 3.11 pickles them, getattr(EnumClass, 'NAME').

Nothing malicious is ever loaded here: the evil objects are only pickled.
"""
import inspect
import os
import sys
import warnings
import zlib

warnings.filterwarnings("ignore")
OUT = sys.argv[1]
for d in ("benign", "evil", "stub/transformers"):
    os.makedirs(os.path.join(OUT, d), exist_ok=True)

# ---------------------------------------------------------------- the transformers stand-in
# As in transformers' utils/generic.py, trainer_utils.py, debug_utils.py, training_args.py: the
# enums are ExplicitEnum (str, Enum); TrainingArguments is a dataclass with no pickling hooks.
# Python 3.11 pickles enum members by name through builtins.getattr; Python <= 3.10 and >= 3.12
# by value, (EnumClass, (value,)), which is what these fixtures show (docs/policy.md).
STUB = {
    "__init__.py": "",
    "utils.py": '''import enum


class ExplicitEnum(str, enum.Enum):
    @classmethod
    def _missing_(cls, value):
        raise ValueError("%r is not a valid %s" % (value, cls.__name__))

    def __reduce_ex__(self, proto):  # Python <= 3.10 / >= 3.12 behaviour
        return self.__class__, (self._value_,)
''',
    "trainer_utils.py": '''from .utils import ExplicitEnum


class IntervalStrategy(ExplicitEnum):
    NO = "no"
    STEPS = "steps"
    EPOCH = "epoch"


class HubStrategy(ExplicitEnum):
    END = "end"
    EVERY_SAVE = "every_save"
    CHECKPOINT = "checkpoint"
    ALL_CHECKPOINTS = "all_checkpoints"


class SchedulerType(ExplicitEnum):
    LINEAR = "linear"
    COSINE = "cosine"
    CONSTANT = "constant"


class FSDPOption(ExplicitEnum):
    FULL_SHARD = "full_shard"
    OFFLOAD = "offload"
''',
    "debug_utils.py": '''from .utils import ExplicitEnum


class DebugOption(ExplicitEnum):
    UNDERFLOW_OVERFLOW = "underflow_overflow"
    TPU_METRICS_DEBUG = "tpu_metrics_debug"
''',
    "training_args.py": '''import dataclasses
import typing

from .debug_utils import DebugOption
from .trainer_utils import FSDPOption, HubStrategy, IntervalStrategy, SchedulerType
from .utils import ExplicitEnum


class OptimizerNames(ExplicitEnum):
    ADAMW_HF = "adamw_hf"
    ADAMW_TORCH = "adamw_torch"
    ADAFACTOR = "adafactor"


@dataclasses.dataclass
class TrainingArguments:
    output_dir: str = "out"
    overwrite_output_dir: bool = False
    do_train: bool = True
    evaluation_strategy: typing.Any = IntervalStrategy.NO
    logging_strategy: typing.Any = IntervalStrategy.STEPS
    save_strategy: typing.Any = IntervalStrategy.EPOCH
    hub_strategy: typing.Any = HubStrategy.EVERY_SAVE
    lr_scheduler_type: typing.Any = SchedulerType.LINEAR
    optim: typing.Any = OptimizerNames.ADAMW_TORCH
    debug: list = dataclasses.field(default_factory=list)
    fsdp: list = dataclasses.field(default_factory=list)
    learning_rate: float = 5e-5
    num_train_epochs: float = 3.0
    per_device_train_batch_size: int = 8
    report_to: list = dataclasses.field(default_factory=lambda: ["tensorboard"])
    fsdp_config: dict = dataclasses.field(default_factory=dict)
    seed: int = 42
    logging_dir: typing.Optional[str] = None
''',
}
for name, text in STUB.items():
    with open(os.path.join(OUT, "stub/transformers", name), "w") as f:
        f.write(text)
sys.path.insert(0, os.path.join(OUT, "stub"))

import joblib  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from transformers.debug_utils import DebugOption  # noqa: E402
from transformers.trainer_utils import FSDPOption  # noqa: E402
from transformers.training_args import TrainingArguments  # noqa: E402


def out(kind, name):
    return os.path.join(OUT, kind, name)


class Evil:
    """Pickles as os.system("true"); only ever pickled here."""

    def __reduce__(self):
        return (os.system, ("true",))


# ---------------------------------------------------------------- quantized tensors
x = torch.randn(4, 3)
torch.save({"per_tensor": torch.quantize_per_tensor(x, 0.1, 10, torch.quint8),
            "per_channel": torch.quantize_per_channel(x, torch.rand(4) + 0.1,
                                                      torch.zeros(4, dtype=torch.long), 0,
                                                      torch.qint8),
            "per_channel_float_zp": torch.quantize_per_channel(x, torch.rand(4) + 0.1,
                                                               torch.zeros(4), 0, torch.quint8),
            "qint32": torch.quantize_per_tensor(x, 0.5, 0, torch.qint32)},
           out("benign", "torch_quantized.pt"))

# ---------------------------------------------------------------- whole torch.nn modules
ARGS = {"Linear": (3, 4), "Bilinear": (2, 3, 4), "Embedding": (10, 3), "EmbeddingBag": (10, 3),
        "RNN": (3, 4), "LSTM": (3, 4, 2), "GRU": (3, 4), "RNNCell": (3, 4), "LSTMCell": (3, 4),
        "GRUCell": (3, 4), "MultiheadAttention": (8, 2), "Transformer": (8, 2, 1, 1, 16),
        "TransformerEncoderLayer": (8, 2, 16), "TransformerDecoderLayer": (8, 2, 16),
        "LayerNorm": (4,), "GroupNorm": (2, 4), "LocalResponseNorm": (2,),
        "CrossMapLRN2d": (2,), "Softmax": (1,), "Softmin": (1,), "LogSoftmax": (1,),
        "Threshold": (0.1, 0.0), "Unflatten": (1, (2, 2)), "Fold": ((4, 4), (2, 2)),
        "Unfold": ((2, 2),), "PixelShuffle": (2,), "PixelUnshuffle": (2,),
        "Upsample": (None, 2), "UpsamplingNearest2d": (None, 2),
        "UpsamplingBilinear2d": (None, 2), "ChannelShuffle": (2,), "ConstantPad1d": (1, 0.0),
        "ConstantPad2d": (1, 0.0), "ConstantPad3d": (1, 0.0), "LPPool1d": (2, 2),
        "LPPool2d": (2, 2), "FractionalMaxPool2d": (2,), "FractionalMaxPool3d": (2,),
        "AdaptiveLogSoftmaxWithLoss": (8, 10, [4]),
        "TransformerEncoder": "enc", "TransformerDecoder": "dec"}
FRACTIONAL = {"FractionalMaxPool2d": {"output_size": 3}, "FractionalMaxPool3d": {"output_size": 3}}
SKIP = ("Lazy", "RNNBase", "RNNCellBase")  # docs/policy.md: not on the benign list
for cname in sorted(torch.nn.modules.__all__):
    cls = getattr(torch.nn.modules, cname)
    if not (inspect.isclass(cls) and issubclass(cls, torch.nn.Module)) or cname.startswith(SKIP):
        continue
    a = ARGS.get(cname)
    if a == "enc":
        m = cls(torch.nn.TransformerEncoderLayer(8, 2, 16), 2)
    elif a == "dec":
        m = cls(torch.nn.TransformerDecoderLayer(8, 2, 16), 2)
    else:
        if a is None:
            if cname.startswith(("Conv", "ConvTranspose")):
                a = (2, 2, 3)
            elif "Norm" in cname:
                a = (4,)
            elif "pool" in cname.lower() or "Pad" in cname:
                a = (2,) if "pool" in cname.lower() else (1,)
            else:
                a = ()
        m = cls(*a, **FRACTIONAL.get(cname, {}))
    torch.save(m, out("benign", "torch_nn_%s.pt" % cname))
torch.save(torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.BatchNorm2d(2), torch.nn.ReLU(),
                               torch.nn.Flatten(), torch.nn.LSTM(2, 2)),
           out("benign", "torch_nn_sequential_mix.pt"))

# An LSTM with one extra attribute that pickles as os.system.
lstm = torch.nn.LSTM(3, 4)
lstm.extra = Evil()
torch.save(lstm, out("evil", "torch_nn_lstm_extra_global.pt"))

# ---------------------------------------------------------------- Trainer training_args.bin
args = TrainingArguments(debug=[DebugOption.UNDERFLOW_OVERFLOW], fsdp=[FSDPOption.FULL_SHARD])
args.__dict__["_n_gpu"] = 0
args.__dict__["__cached__setup_devices"] = torch.device("cpu")
torch.save(args, out("benign", "torch_training_args.bin"))
evil_args = TrainingArguments()
evil_args.logging_dir = Evil()
torch.save(evil_args, out("evil", "torch_training_args.bin"))

# The same written as Python 3.11 writes it: Enum.__reduce_ex__ there is
# (getattr, (self.__class__, self._name_)). Set explicitly, so any Python writes 3.11's bytes;
# torch.save uses protocol 2, pickle.dump protocols 2 to 5.
from transformers.utils import ExplicitEnum  # noqa: E402

by_value = ExplicitEnum.__reduce_ex__
ExplicitEnum.__reduce_ex__ = lambda self, proto: (getattr, (self.__class__, self._name_))
torch.save(args, out("benign", "torch_training_args_py311.bin"))
import pickle as _pickle  # noqa: E402

# pickle.load of these must not import torch (reach.py arms before): no torch.device field.
plain = TrainingArguments(debug=[DebugOption.UNDERFLOW_OVERFLOW], fsdp=[FSDPOption.FULL_SHARD])
for proto in (2, 3, 4, 5):
    with open(out("benign", "pickle_training_args_py311_p%d.bin" % proto), "wb") as f:
        _pickle.dump(plain, f, protocol=proto)
torch.save(evil_args, out("evil", "torch_training_args_py311.bin"))
with open(out("evil", "pickle_training_args_py311_p4.bin"), "wb") as f:
    _pickle.dump(evil_args, f, protocol=4)
ExplicitEnum.__reduce_ex__ = by_value

# ---------------------------------------------------------------- joblib compressed dumps
data = {"weights": np.arange(12, dtype=np.float32).reshape(3, 4),
        "objects": np.array([{"a": 1}, [2, 3], "four"], dtype=object),
        "matrix": np.matrix([[1, 2], [3, 4]]), "names": ["x", "y"], "span": range(3)}
for method in ("zlib", "gzip", "bz2", "xz", "lzma"):
    joblib.dump(data, out("benign", "joblib_%s.joblib" % method), compress=(method, 3))
    joblib.dump({"model": Evil()}, out("evil", "joblib_%s.joblib" % method), compress=(method, 3))

# joblib < 0.10's ZF file ("ZF" + '0x%x' left-justified to 19 + zlib), as write_zfile wrote it.
# joblib 1.2 cannot write one but still reads it (load_compatibility).
import pickle  # noqa: E402


def zfile(path, payload):
    with open(path, "wb") as f:
        f.write(b"ZF" + ("0x%x" % len(payload)).ljust(19).encode() + zlib.compress(payload, 3))


zfile(out("benign", "joblib_zfile.pkl"), pickle.dumps({"a": [1, 2.5, "x"], "r": range(4)}, 2))
zfile(out("evil", "joblib_zfile.pkl"), pickle.dumps({"model": Evil()}, 2))
