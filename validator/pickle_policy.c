#include "pickle_policy.h"

#include <string.h>

#include "../parser/mem.h"

/* ---------------------------------------------------------------- built-in lists
 * docs/policy.md explains each list and every benign entry. Bump STG_POLICY_VERSION whenever an
 * entry changes. Entries are dotted names; see match_dotted for how they match. */

/* (1) Hard-block: universal resolvers, code execution, nested loaders. No option overrides. */
static const char *const hard_block[] = {
    "builtins.eval",
    "builtins.exec",
    "builtins.compile",
    "builtins.__import__",
    "builtins.getattr",
    "builtins.setattr",
    "builtins.delattr",
    "builtins.open",
    "builtins.breakpoint",
    "builtins.input",
    "builtins.globals",
    "builtins.locals",
    "builtins.vars",
    "builtins.help",
    "__builtin__.eval",
    "__builtin__.exec",
    "__builtin__.compile",
    "__builtin__.__import__",
    "__builtin__.getattr",
    "__builtin__.setattr",
    "__builtin__.delattr",
    "__builtin__.open",
    "__builtin__.execfile",
    "__builtin__.file",
    "__builtin__.input",
    "__builtin__.raw_input",
    "__builtin__.reduce",
    "__builtin__.intern",
    "__builtins__",
    "os",
    "posix",
    "nt",
    "subprocess",
    "_posixsubprocess",
    "pty",
    "commands",
    "runpy",
    "code",
    "codeop",
    "importlib",
    "imp",
    "zipimport",
    "pkgutil.resolve_name",
    "pkgutil.get_importer",
    "pkgutil.find_loader",
    "pydoc.locate",
    "pydoc.pipepager",
    "pydoc.tempfilepager",
    "marshal",
    "types.FunctionType",
    "types.CodeType",
    "types.LambdaType",
    "types.MethodType",
    "ctypes",
    "_ctypes",
    "operator.attrgetter",
    "operator.itemgetter",
    "operator.methodcaller",
    "_operator.attrgetter",
    "_operator.itemgetter",
    "_operator.methodcaller",
    "functools.partial",
    "functools.reduce",
    "_functools",
    "pickle",
    "_pickle",
    "cPickle",
    "dill",
    "cloudpickle",
    "torch.load",
    "torch.serialization.load",
    "torch.serialization._load",
    "torch.serialization._legacy_load",
    "torch.storage._load_from_bytes",
    "torch.hub",
    "numpy.load",
    "numpy.lib.npyio.load",
    "joblib.load",
    "joblib.numpy_pickle.load",
    "sys",
    "webbrowser",
    "_interpreters",
    "_xxsubinterpreters",
    "_frozen_importlib",
    "_frozen_importlib_external",
    "_imp",
};

/* (2) Allowlist: exact module.name pairs a weights-only checkpoint uses. */
static const char *const allow_list[][2] = {
    {"collections", "OrderedDict"},
    {"torch._utils", "_rebuild_tensor"},
    {"torch._utils", "_rebuild_tensor_v2"},
    {"torch._utils", "_rebuild_parameter"},
    {"torch._utils", "_rebuild_sparse_tensor"},
    {"torch._utils", "_rebuild_sparse_csr_tensor"},
    {"torch._utils", "_rebuild_meta_tensor_no_storage"},
    {"torch._utils", "_rebuild_qtensor"},
    {"torch.nn.parameter", "Parameter"},
    {"torch.serialization", "_get_layout"},
    {"torch", "Size"},
    {"torch", "Tensor"},
    {"torch", "device"},
    {"torch.storage", "TypedStorage"},
    {"torch.storage", "UntypedStorage"},
    {"torch", "UntypedStorage"},
#define STG_TORCH_STORAGE(prefix)                                                              \
    {prefix, "ByteStorage"}, {prefix, "CharStorage"}, {prefix, "ShortStorage"},                \
        {prefix, "IntStorage"}, {prefix, "LongStorage"}, {prefix, "HalfStorage"},              \
        {prefix, "FloatStorage"}, {prefix, "DoubleStorage"}, {prefix, "BFloat16Storage"},      \
        {prefix, "BoolStorage"}, {prefix, "ComplexFloatStorage"},                              \
        {prefix, "ComplexDoubleStorage"}, {prefix, "QUInt8Storage"}, {prefix, "QInt8Storage"}, \
        {prefix, "QInt32Storage"}, {prefix, "QUInt4x2Storage"},                                \
    {                                                                                          \
        prefix, "QUInt2x4Storage"                                                              \
    }
    STG_TORCH_STORAGE("torch"),
    STG_TORCH_STORAGE("torch.cuda"),
#define STG_TORCH_TENSOR(prefix)                                                       \
    {prefix, "ByteTensor"}, {prefix, "CharTensor"}, {prefix, "ShortTensor"},           \
        {prefix, "IntTensor"}, {prefix, "LongTensor"}, {prefix, "HalfTensor"},         \
        {prefix, "FloatTensor"}, {prefix, "DoubleTensor"}, {prefix, "BFloat16Tensor"}, \
    {                                                                                  \
        prefix, "BoolTensor"                                                           \
    }
    STG_TORCH_TENSOR("torch"),
    STG_TORCH_TENSOR("torch.cuda"),
    {"torch", "float16"},
    {"torch", "float32"},
    {"torch", "float64"},
    {"torch", "bfloat16"},
    {"torch", "int8"},
    {"torch", "int16"},
    {"torch", "int32"},
    {"torch", "int64"},
    {"torch", "uint8"},
    {"torch", "bool"},
    {"torch", "complex32"},
    {"torch", "complex64"},
    {"torch", "complex128"},
    {"numpy.core.multiarray", "_reconstruct"},
    {"numpy._core.multiarray", "_reconstruct"},
    {"numpy.core.multiarray", "scalar"},
    {"numpy._core.multiarray", "scalar"},
    {"numpy.core.numeric", "_frombuffer"},
    {"numpy._core.numeric", "_frombuffer"},
    {"numpy", "ndarray"},
    {"numpy", "dtype"},
    {"numpy.matrixlib.defmatrix", "matrix"},
    {"numpy", "matrix"},
    {"_codecs", "encode"},
/* Builtin types that only build a value from values (docs/policy.md, one by one), under
     * both spellings: Python 3's unpickler maps __builtin__ to builtins (_compat_pickle). */
#define STG_PLAIN_BUILTINS(prefix)                                                                 \
    {prefix, "set"}, {prefix, "frozenset"}, {prefix, "bytearray"}, {prefix, "slice"},              \
        {prefix, "complex"}, {prefix, "range"}, {prefix, "dict"}, {prefix, "list"},                \
        {prefix, "tuple"}, {prefix, "bytes"}, {prefix, "str"}, {prefix, "int"}, {prefix, "float"}, \
    {                                                                                              \
        prefix, "bool"                                                                             \
    }
    STG_PLAIN_BUILTINS("builtins"),
    STG_PLAIN_BUILTINS("__builtin__"),
/* Builtin functions and constants that compute a value from their arguments and nothing else
     * (docs/policy.md, each one and each builtin left out): no import, attribute by name, I/O,
     * call of a callable they are given, nor work beyond what the arguments' size bounds. */
#define STG_HARMLESS_BUILTINS(prefix)                                                          \
    {prefix, "len"}, {prefix, "abs"}, {prefix, "divmod"}, {prefix, "hash"}, {prefix, "repr"},  \
        {prefix, "ascii"}, {prefix, "chr"}, {prefix, "ord"}, {prefix, "bin"}, {prefix, "oct"}, \
        {prefix, "hex"}, {prefix, "isinstance"}, {prefix, "issubclass"}, {prefix, "callable"}, \
        {prefix, "zip"}, {prefix, "enumerate"}, {prefix, "reversed"}, {prefix, "Ellipsis"},    \
    {                                                                                          \
        prefix, "NotImplemented"                                                               \
    }
    STG_HARMLESS_BUILTINS("builtins"),
    STG_HARMLESS_BUILTINS("__builtin__"),
    {"__builtin__", "unichr"}, /* Python 2's chr: _compat_pickle maps it to builtins.chr */
    /* Python 2 names _compat_pickle maps to the types above. */
    {"__builtin__", "xrange"},
    {"__builtin__", "unicode"},
    {"__builtin__", "long"},
    {"__builtin__", "basestring"},
    /* torch.qscheme constants: a GLOBAL of one is an attribute lookup, nothing is called */
    {"torch", "per_tensor_affine"},
    {"torch", "per_channel_affine"},
    {"torch", "per_tensor_symmetric"},
    {"torch", "per_channel_symmetric"},
    {"torch", "per_channel_affine_float_qparams"},
    {"joblib.numpy_pickle", "NumpyArrayWrapper"},
    {"joblib.numpy_pickle", "NDArrayWrapper"},
    {"joblib.numpy_pickle_compat", "NDArrayWrapper"},
    {"joblib.numpy_pickle", "ZNDArrayWrapper"},
    {"joblib.numpy_pickle_compat", "ZNDArrayWrapper"},
};

/* (3) Reviewed benign classes: only torch.load(weights_only=False) loads them, no known gadget
 * (docs/policy.md says what was checked for each). */
static const char *const benign_list[][2] = {
    /* torch.nn: rebuilt by NEWOBJ (object.__new__) and BUILD, i.e. Module.__setstate__ (a dict
     * update plus default hook tables) or a subclass one that only fills in defaults. */
    {"torch.nn.modules.module", "Module"},
    {"torch.nn.modules.container", "Container"},
    {"torch.nn.modules.container", "Sequential"},
    {"torch.nn.modules.container", "ModuleList"},
    {"torch.nn.modules.container", "ModuleDict"},
    {"torch.nn.modules.container", "ParameterList"},
    {"torch.nn.modules.container", "ParameterDict"},
    {"torch.nn.modules.linear", "Linear"},
    {"torch.nn.modules.linear", "Identity"},
    {"torch.nn.modules.linear", "Bilinear"},
    {"torch.nn.modules.linear", "NonDynamicallyQuantizableLinear"},
    {"torch.nn.modules.conv", "Conv1d"},
    {"torch.nn.modules.conv", "Conv2d"},
    {"torch.nn.modules.conv", "Conv3d"},
    {"torch.nn.modules.conv", "ConvTranspose1d"},
    {"torch.nn.modules.conv", "ConvTranspose2d"},
    {"torch.nn.modules.conv", "ConvTranspose3d"},
    {"torch.nn.modules.normalization", "LayerNorm"},
    {"torch.nn.modules.normalization", "GroupNorm"},
    {"torch.nn.modules.normalization", "LocalResponseNorm"},
    {"torch.nn.modules.normalization", "CrossMapLRN2d"},
    {"torch.nn.modules.batchnorm", "BatchNorm1d"},
    {"torch.nn.modules.batchnorm", "BatchNorm2d"},
    {"torch.nn.modules.batchnorm", "BatchNorm3d"},
    {"torch.nn.modules.batchnorm", "SyncBatchNorm"},
    {"torch.nn.modules.instancenorm", "InstanceNorm1d"},
    {"torch.nn.modules.instancenorm", "InstanceNorm2d"},
    {"torch.nn.modules.instancenorm", "InstanceNorm3d"},
    {"torch.nn.modules.activation", "ReLU"},
    {"torch.nn.modules.activation", "ReLU6"},
    {"torch.nn.modules.activation", "RReLU"},
    {"torch.nn.modules.activation", "PReLU"},
    {"torch.nn.modules.activation", "GELU"},
    {"torch.nn.modules.activation", "SiLU"},
    {"torch.nn.modules.activation", "Mish"},
    {"torch.nn.modules.activation", "ELU"},
    {"torch.nn.modules.activation", "CELU"},
    {"torch.nn.modules.activation", "SELU"},
    {"torch.nn.modules.activation", "GLU"},
    {"torch.nn.modules.activation", "Tanh"},
    {"torch.nn.modules.activation", "Tanhshrink"},
    {"torch.nn.modules.activation", "Sigmoid"},
    {"torch.nn.modules.activation", "LogSigmoid"},
    {"torch.nn.modules.activation", "Hardtanh"},
    {"torch.nn.modules.activation", "Hardsigmoid"},
    {"torch.nn.modules.activation", "Hardswish"},
    {"torch.nn.modules.activation", "Hardshrink"},
    {"torch.nn.modules.activation", "Softshrink"},
    {"torch.nn.modules.activation", "Softsign"},
    {"torch.nn.modules.activation", "Softplus"},
    {"torch.nn.modules.activation", "Threshold"},
    {"torch.nn.modules.activation", "LeakyReLU"},
    {"torch.nn.modules.activation", "Softmax"},
    {"torch.nn.modules.activation", "Softmax2d"},
    {"torch.nn.modules.activation", "Softmin"},
    {"torch.nn.modules.activation", "LogSoftmax"},
    {"torch.nn.modules.activation", "MultiheadAttention"},
    {"torch.nn.modules.dropout", "Dropout"},
    {"torch.nn.modules.dropout", "Dropout1d"},
    {"torch.nn.modules.dropout", "Dropout2d"},
    {"torch.nn.modules.dropout", "Dropout3d"},
    {"torch.nn.modules.dropout", "AlphaDropout"},
    {"torch.nn.modules.dropout", "FeatureAlphaDropout"},
    {"torch.nn.modules.sparse", "Embedding"},
    {"torch.nn.modules.sparse", "EmbeddingBag"},
    {"torch.nn.modules.rnn", "RNN"},
    {"torch.nn.modules.rnn", "LSTM"},
    {"torch.nn.modules.rnn", "GRU"},
    {"torch.nn.modules.rnn", "RNNCell"},
    {"torch.nn.modules.rnn", "LSTMCell"},
    {"torch.nn.modules.rnn", "GRUCell"},
    {"torch.nn.modules.transformer", "Transformer"},
    {"torch.nn.modules.transformer", "TransformerEncoder"},
    {"torch.nn.modules.transformer", "TransformerDecoder"},
    {"torch.nn.modules.transformer", "TransformerEncoderLayer"},
    {"torch.nn.modules.transformer", "TransformerDecoderLayer"},
    {"torch.nn.modules.pooling", "MaxPool1d"},
    {"torch.nn.modules.pooling", "MaxPool2d"},
    {"torch.nn.modules.pooling", "MaxPool3d"},
    {"torch.nn.modules.pooling", "AvgPool1d"},
    {"torch.nn.modules.pooling", "AvgPool2d"},
    {"torch.nn.modules.pooling", "AvgPool3d"},
    {"torch.nn.modules.pooling", "AdaptiveAvgPool1d"},
    {"torch.nn.modules.pooling", "AdaptiveAvgPool2d"},
    {"torch.nn.modules.pooling", "AdaptiveAvgPool3d"},
    {"torch.nn.modules.pooling", "AdaptiveMaxPool1d"},
    {"torch.nn.modules.pooling", "AdaptiveMaxPool2d"},
    {"torch.nn.modules.pooling", "AdaptiveMaxPool3d"},
    {"torch.nn.modules.pooling", "MaxUnpool1d"},
    {"torch.nn.modules.pooling", "MaxUnpool2d"},
    {"torch.nn.modules.pooling", "MaxUnpool3d"},
    {"torch.nn.modules.pooling", "LPPool1d"},
    {"torch.nn.modules.pooling", "LPPool2d"},
    {"torch.nn.modules.pooling", "FractionalMaxPool2d"},
    {"torch.nn.modules.pooling", "FractionalMaxPool3d"},
    {"torch.nn.modules.padding", "ConstantPad1d"},
    {"torch.nn.modules.padding", "ConstantPad2d"},
    {"torch.nn.modules.padding", "ConstantPad3d"},
    {"torch.nn.modules.padding", "ZeroPad2d"},
    {"torch.nn.modules.padding", "ReflectionPad1d"},
    {"torch.nn.modules.padding", "ReflectionPad2d"},
    {"torch.nn.modules.padding", "ReflectionPad3d"},
    {"torch.nn.modules.padding", "ReplicationPad1d"},
    {"torch.nn.modules.padding", "ReplicationPad2d"},
    {"torch.nn.modules.padding", "ReplicationPad3d"},
    {"torch.nn.modules.upsampling", "Upsample"},
    {"torch.nn.modules.upsampling", "UpsamplingNearest2d"},
    {"torch.nn.modules.upsampling", "UpsamplingBilinear2d"},
    {"torch.nn.modules.pixelshuffle", "PixelShuffle"},
    {"torch.nn.modules.pixelshuffle", "PixelUnshuffle"},
    {"torch.nn.modules.channelshuffle", "ChannelShuffle"},
    {"torch.nn.modules.flatten", "Flatten"},
    {"torch.nn.modules.flatten", "Unflatten"},
    {"torch.nn.modules.fold", "Fold"},
    {"torch.nn.modules.fold", "Unfold"},
    {"torch.nn.modules.distance", "CosineSimilarity"},
    {"torch.nn.modules.distance", "PairwiseDistance"},
    {"torch.nn.modules.loss", "L1Loss"},
    {"torch.nn.modules.loss", "MSELoss"},
    {"torch.nn.modules.loss", "CrossEntropyLoss"},
    {"torch.nn.modules.loss", "NLLLoss"},
    {"torch.nn.modules.loss", "NLLLoss2d"},
    {"torch.nn.modules.loss", "BCELoss"},
    {"torch.nn.modules.loss", "BCEWithLogitsLoss"},
    {"torch.nn.modules.loss", "KLDivLoss"},
    {"torch.nn.modules.loss", "HuberLoss"},
    {"torch.nn.modules.loss", "SmoothL1Loss"},
    {"torch.nn.modules.loss", "CTCLoss"},
    {"torch.nn.modules.loss", "PoissonNLLLoss"},
    {"torch.nn.modules.loss", "GaussianNLLLoss"},
    {"torch.nn.modules.loss", "HingeEmbeddingLoss"},
    {"torch.nn.modules.loss", "MarginRankingLoss"},
    {"torch.nn.modules.loss", "MultiMarginLoss"},
    {"torch.nn.modules.loss", "MultiLabelMarginLoss"},
    {"torch.nn.modules.loss", "MultiLabelSoftMarginLoss"},
    {"torch.nn.modules.loss", "SoftMarginLoss"},
    {"torch.nn.modules.loss", "CosineEmbeddingLoss"},
    {"torch.nn.modules.loss", "TripletMarginLoss"},
    {"torch.nn.modules.loss", "TripletMarginWithDistanceLoss"},
    {"torch.nn.modules.adaptive", "AdaptiveLogSoftmaxWithLoss"},
    /* the default activations a Transformer layer keeps in its state: referenced, not called */
    {"torch.nn.functional", "relu"},
    {"torch.nn.functional", "gelu"},
    {"argparse", "Namespace"},
    /* Hugging Face Trainer training_args.bin: a dataclass rebuilt by NEWOBJ + BUILD (instance
     * dict update) and its enum fields, rebuilt by value lookup (EnumClass(value)). */
    {"transformers.training_args", "TrainingArguments"},
    {"transformers.training_args_seq2seq", "Seq2SeqTrainingArguments"},
    {"transformers.training_args", "OptimizerNames"},
    {"transformers.trainer_utils", "IntervalStrategy"},
    {"transformers.trainer_utils", "EvaluationStrategy"},
    {"transformers.trainer_utils", "SaveStrategy"},
    {"transformers.trainer_utils", "HubStrategy"},
    {"transformers.trainer_utils", "SchedulerType"},
    {"transformers.trainer_utils", "FSDPOption"},
    {"transformers.debug_utils", "DebugOption"},
};

/* (4) Denylist (for the label only: anything not allowed blocks anyway). A module entry covers
 * its submodules; "io.FileIO"-style entries name one attribute. */
static const char *const deny_list[] = {
    "os",
    "posix",
    "nt",
    "subprocess",
    "sys",
    "pty",
    "commands",
    "runpy",
    "code",
    "codeop",
    "compileall",
    "py_compile",
    "importlib",
    "imp",
    "zipimport",
    "pkgutil",
    "site",
    "gc",
    "inspect",
    "builtins",
    "__builtin__",
    "__builtins__",
    "types",
    "marshal",
    "pickle",
    "_pickle",
    "cPickle",
    "dill",
    "cloudpickle",
    "joblib",
    "operator",
    "_operator",
    "functools",
    "_functools",
    "ctypes",
    "_ctypes",
    "multiprocessing",
    "threading",
    "_thread",
    "signal",
    "_signal",
    "atexit",
    "socket",
    "ssl",
    "http",
    "httplib",
    "urllib",
    "urllib2",
    "requests",
    "aiohttp",
    "asyncio",
    "smtplib",
    "imaplib",
    "poplib",
    "ftplib",
    "telnetlib",
    "nntplib",
    "xmlrpc",
    "socketserver",
    "select",
    "selectors",
    "webbrowser",
    "shutil",
    "tempfile",
    "filecmp",
    "fileinput",
    "glob",
    "tarfile",
    "zipfile",
    "shelve",
    "sqlite3",
    "_sqlite3",
    "mmap",
    "logging",
    "syslog",
    "linecache",
    "difflib",
    "platform",
    "distutils",
    "pydoc",
    "pexpect",
    "pipes",
    "venv",
    "ensurepip",
    "pip",
    "unittest",
    "test",
    "doctest",
    "pdb",
    "bdb",
    "cProfile",
    "profile",
    "timeit",
    "trace",
    "idlelib",
    "lib2to3",
    "uuid",
    "copyreg",
    "copy_reg",
    "_osx_support",
    "_aix_support",
    "_pyrepl",
    "_posixsubprocess",
    "_interpreters",
    "_xxsubinterpreters",
    "_frozen_importlib",
    "_frozen_importlib_external",
    "_imp",
    "_winapi",
    "msvcrt",
    "winreg",
    "_io.FileIO",
    "io.FileIO",
    "io.open",
    "_io.open",
    "codecs.open",
    "_codecs.open",
    "torch.hub",
    "torch.jit",
    "torch._dynamo",
    "torch._inductor",
    "torch.utils.collect_env",
    "torch.utils.bottleneck",
    "torch.utils._config_module",
    "torch.fx.experimental.symbolic_shapes",
    "torch.distributed.rpc",
    "torch.load",
    "torch.storage._load_from_bytes",
    "torch.serialization.load",
    "torch.package",
    "torch._C._jit",
    "numpy.f2py",
    "numpy.distutils",
    "numpy.testing",
    "numpy.load",
    "numpy.lib.npyio",
    "numpy.ctypeslib",
    "numpy.lib.utils",
};

/* Dunder attribute names that reach interpreter internals. */
static const char *const dunders[] = {
    "__builtins__", "__globals__",       "__class__",  "__subclasses__",   "__dict__",
    "__reduce__",   "__reduce_ex__",     "__import__", "__getattribute__", "__getattr__",
    "__setattr__",  "__delattr__",       "__mro__",    "__bases__",        "__base__",
    "__code__",     "__closure__",       "__func__",   "__self__",         "__loader__",
    "__spec__",     "__init_subclass__", "__call__",   "__setstate__",
};

#define STG_MAX_COMPONENTS 64
#define STG_MAX_DOTTED 4096

struct stg_policy_entry {
    char *module;
    char *name; /* NULL: the whole module (deny only) */
};

struct stg_policy {
    struct stg_policy_entry *allow, *deny;
    size_t nallow, ndeny, cap_allow, cap_deny;
};

const char *stg_policy_version(void)
{
    return STG_POLICY_VERSION;
}

/* true when some dotted prefix of s[start..len), ending at a component boundary, equals e. Every
 * entry is non-empty (built-in literals; caller entries pass word_ok). */
static bool prefix_at(const char *s, size_t len, size_t start, const char *e, size_t elen)
{
    if (len - start < elen || memcmp(s + start, e, elen) != 0) {
        return false;
    }
    return start + elen == len || s[start + elen] == '.';
}

/* Component start offsets of a dotted name; false when there are too many. */
static bool split(const char *s, size_t len, size_t *starts, size_t *count)
{
    size_t n = 0;
    starts[n++] = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            if (n == STG_MAX_COMPONENTS) {
                return false;
            }
            starts[n++] = i + 1;
        }
    }
    *count = n;
    return true;
}

/* An entry matches when it equals a dotted prefix of the name starting at ANY component: so
 * ('torch', 'serialization.os.system') meets "os" and "os.system". */
static bool match_any(const char *s, size_t len, const size_t *starts, size_t count, const char *e)
{
    size_t elen = strlen(e);
    for (size_t i = 0; i < count; i++) {
        if (starts[i] < len && s[starts[i]] == e[0] && prefix_at(s, len, starts[i], e, elen)) {
            return true;
        }
    }
    return false;
}

static bool pair_eq(const char *m, size_t ml, const char *n, size_t nl, const char *em,
                    const char *en)
{
    return strlen(em) == ml && strlen(en) == nl && memcmp(m, em, ml) == 0 && memcmp(n, en, nl) == 0;
}

static bool hard_blocked(const char *full, size_t len, const size_t *starts, size_t count)
{
    for (size_t i = 0; i < sizeof hard_block / sizeof hard_block[0]; i++) {
        if (match_any(full, len, starts, count, hard_block[i])) {
            return true;
        }
    }
    return false;
}

static stg_policy_verdict verdict(stg_global_class k, bool hard, const char *reason)
{
    stg_policy_verdict v = {k, hard, reason};
    return v;
}

/* Builds module + "." + name into out (NUL-free check is not needed: lengths are used). */
static bool join(const char *m, size_t ml, const char *n, size_t nl, char *out, size_t *len)
{
    if (ml > STG_MAX_DOTTED || nl > STG_MAX_DOTTED - ml || ml + nl + 1 > STG_MAX_DOTTED) {
        return false;
    }
    memcpy(out, m, ml);
    out[ml] = '.';
    memcpy(out + ml + 1, n, nl);
    *len = ml + 1 + nl;
    return true;
}

stg_policy_verdict stg_policy_classify(const stg_policy *p, const char *module, size_t module_len,
                                       const char *name, size_t name_len)
{
    char full[STG_MAX_DOTTED + 1];
    size_t len = 0, starts[STG_MAX_COMPONENTS], count = 0;
    bool checkable = join(module, module_len, name, name_len, full, &len) &&
                     split(full, len, starts, &count);
    if (checkable && hard_blocked(full, len, starts, count)) {
        return verdict(STG_GLOBAL_DANGEROUS, true, "hard-block list");
    }
    for (size_t i = 0; i < sizeof allow_list / sizeof allow_list[0]; i++) {
        if (pair_eq(module, module_len, name, name_len, allow_list[i][0], allow_list[i][1])) {
            return verdict(STG_GLOBAL_ALLOWED, false, "built-in allowlist");
        }
    }
    if (p != NULL) {
        for (size_t i = 0; i < p->nallow; i++) {
            if (pair_eq(module, module_len, name, name_len, p->allow[i].module, p->allow[i].name)) {
                return verdict(STG_GLOBAL_ALLOWED, false, "caller's allowlist");
            }
        }
    }
    for (size_t i = 0; i < sizeof benign_list / sizeof benign_list[0]; i++) {
        if (pair_eq(module, module_len, name, name_len, benign_list[i][0], benign_list[i][1])) {
            return verdict(STG_GLOBAL_BENIGN, false, "reviewed benign class");
        }
    }
    if (!checkable) {
        return verdict(STG_GLOBAL_UNKNOWN, false, "name too long or too deeply dotted");
    }
    for (size_t i = 0; i < sizeof deny_list / sizeof deny_list[0]; i++) {
        if (match_any(full, len, starts, count, deny_list[i])) {
            return verdict(STG_GLOBAL_DANGEROUS, false, "denylist");
        }
    }
    if (p != NULL) {
        char entry[STG_MAX_DOTTED + 1];
        for (size_t i = 0; i < p->ndeny; i++) {
            const struct stg_policy_entry *e = &p->deny[i];
            size_t el = 0;
            if (e->name == NULL) {
                if (match_any(full, len, starts, count, e->module)) {
                    return verdict(STG_GLOBAL_DANGEROUS, false, "caller's denylist");
                }
            } else if (join(e->module, strlen(e->module), e->name, strlen(e->name), entry, &el)) {
                entry[el] = '\0';
                if (match_any(full, len, starts, count, entry)) {
                    return verdict(STG_GLOBAL_DANGEROUS, false, "caller's denylist");
                }
            }
        }
    }
    for (size_t c = 0; c < count; c++) {
        size_t b = starts[c];
        size_t e = c + 1 < count ? starts[c + 1] - 1 : len;
        for (size_t i = 0; i < sizeof dunders / sizeof dunders[0]; i++) {
            if (strlen(dunders[i]) == e - b && memcmp(full + b, dunders[i], e - b) == 0) {
                return verdict(STG_GLOBAL_DANGEROUS, false, "interpreter-internal attribute");
            }
        }
    }
    bool dunder_module = module_len >= 4 && module[1] == '_' && module[module_len - 1] == '_' &&
                         module[module_len - 2] == '_';
    if (module_len > 0 && module[0] == '_' && !dunder_module) {
        return verdict(STG_GLOBAL_DANGEROUS, false, "private module");
    }
    return verdict(STG_GLOBAL_UNKNOWN, false, "on no list");
}

/* ---------------------------------------------------------------- policy objects */

stg_status stg_policy_new(stg_policy **out)
{
    if (out == NULL) {
        return STG_E_BAD_ARG;
    }
    *out = stg_mem_calloc(1, sizeof **out);
    return *out == NULL ? STG_E_NOMEM : STG_OK;
}

void stg_policy_free(stg_policy *p)
{
    if (p == NULL) {
        return;
    }
    for (size_t i = 0; i < p->nallow; i++) {
        stg_mem_free(p->allow[i].module);
        stg_mem_free(p->allow[i].name);
    }
    for (size_t i = 0; i < p->ndeny; i++) {
        stg_mem_free(p->deny[i].module);
        stg_mem_free(p->deny[i].name);
    }
    stg_mem_free(p->allow);
    stg_mem_free(p->deny);
    stg_mem_free(p);
}

/* A module or name as the policy accepts it: non-empty, no whitespace, control bytes or ':'. */
static bool word_ok(const char *s, size_t n)
{
    if (n == 0 || n > STG_MAX_DOTTED / 2) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch <= 0x20 || ch == 0x7f || ch == ':' || ch == '#') {
            return false;
        }
    }
    return true;
}

static stg_status add_n(stg_policy *p, stg_policy_list list, const char *m, size_t ml,
                        const char *n, size_t nl, bool has_name)
{
    if (!word_ok(m, ml) || (has_name && !word_ok(n, nl))) {
        return STG_E_BAD_ARG;
    }
    if (list == STG_POLICY_ALLOW) {
        if (!has_name) {
            return STG_E_BAD_ARG; /* allow entries are exact pairs, never whole modules */
        }
        char full[STG_MAX_DOTTED + 1];
        size_t len, starts[STG_MAX_COMPONENTS], count;
        if (!join(m, ml, n, nl, full, &len) || !split(full, len, starts, &count) ||
            hard_blocked(full, len, starts, count)) {
            return STG_E_BAD_ARG; /* a hard-blocked global cannot be allowed */
        }
    } else if (list != STG_POLICY_DENY) {
        return STG_E_BAD_ARG;
    }
    struct stg_policy_entry **arr = list == STG_POLICY_ALLOW ? &p->allow : &p->deny;
    size_t *cnt = list == STG_POLICY_ALLOW ? &p->nallow : &p->ndeny;
    size_t *cap = list == STG_POLICY_ALLOW ? &p->cap_allow : &p->cap_deny;
    if (*cnt == *cap) {
        size_t ncap = *cap == 0 ? 8 : *cap * 2;
        struct stg_policy_entry *na = stg_mem_realloc(*arr, ncap * sizeof *na);
        if (na == NULL) {
            return STG_E_NOMEM;
        }
        *arr = na;
        *cap = ncap;
    }
    struct stg_policy_entry e = {stg_mem_strndup(m, ml), has_name ? stg_mem_strndup(n, nl) : NULL};
    if (e.module == NULL || (has_name && e.name == NULL)) {
        stg_mem_free(e.module);
        stg_mem_free(e.name);
        return STG_E_NOMEM;
    }
    (*arr)[(*cnt)++] = e;
    return STG_OK;
}

stg_status stg_policy_add(stg_policy *p, stg_policy_list list, const char *module, const char *name)
{
    if (p == NULL || module == NULL) {
        return STG_E_BAD_ARG;
    }
    return add_n(p, list, module, strlen(module), name, name != NULL ? strlen(name) : 0,
                 name != NULL);
}

stg_status stg_policy_allow_spec(stg_policy *p, const char *spec)
{
    if (p == NULL || spec == NULL) {
        return STG_E_BAD_ARG;
    }
    /* layer-check: a caller's C string (a --allow-global argument), not model bytes */
    const char *colon = strchr(spec, ':');
    if (colon == NULL) {
        return STG_E_BAD_ARG;
    }
    return add_n(p, STG_POLICY_ALLOW, spec, (size_t)(colon - spec), colon + 1, strlen(colon + 1),
                 true);
}

/* Splits the next whitespace-separated word of line[*i..n). */
static bool next_word(const char *line, size_t n, size_t *i, const char **w, size_t *wl)
{
    while (*i < n && (line[*i] == ' ' || line[*i] == '\t')) {
        (*i)++;
    }
    if (*i >= n) {
        return false;
    }
    size_t b = *i;
    while (*i < n && line[*i] != ' ' && line[*i] != '\t') {
        (*i)++;
    }
    *w = line + b;
    *wl = *i - b;
    return true;
}

static bool word_is(const char *w, size_t wl, const char *lit)
{
    return strlen(lit) == wl && memcmp(w, lit, wl) == 0;
}

stg_status stg_policy_load(stg_policy *p, const void *buf, size_t len, uint64_t *err_line)
{
    if (p == NULL || (buf == NULL && len > 0)) {
        return STG_E_BAD_ARG;
    }
    const char *s = buf != NULL ? buf : ""; /* NULL with len 0: no pointer arithmetic on NULL */
    uint64_t lineno = 0;
    bool header = false;
    size_t pos = 0;
    if (err_line != NULL) {
        *err_line = 0;
    }
    while (pos < len || !header) { /* pos <= len always: an empty text still has its line 1 */
        lineno++;
        const char *nl = pos < len ? memchr(s + pos, '\n', len - pos) : NULL;
        size_t end = nl != NULL ? (size_t)(nl - s) : len;
        const char *line = s + pos;
        size_t n = end - pos;
        pos = nl != NULL ? end + 1 : len;
        if (n > 0 && line[n - 1] == '\r') {
            n--;
        }
        stg_status st = STG_OK;
        if (memchr(line, '\0', n) != NULL) {
            st = STG_E_INVALID;
        }
        /* Comments run from '#' to the end of the line. */
        const char *hash = st == STG_OK ? memchr(line, '#', n) : NULL;
        if (hash != NULL) {
            n = (size_t)(hash - line);
        }
        size_t i = 0;
        const char *w1 = NULL, *w2 = NULL, *w3 = NULL, *w4 = NULL;
        size_t l1 = 0, l2 = 0, l3 = 0, l4 = 0;
        bool has1 = st == STG_OK && next_word(line, n, &i, &w1, &l1);
        if (st == STG_OK && !header) {
            /* The first line is the format header, exactly "stguard-policy 1". */
            if (!has1 || !word_is(w1, l1, "stguard-policy") || !next_word(line, n, &i, &w2, &l2) ||
                !word_is(w2, l2, "1") || next_word(line, n, &i, &w3, &l3)) {
                st = STG_E_INVALID;
            }
            header = true;
        } else if (st == STG_OK && has1) {
            bool has2 = next_word(line, n, &i, &w2, &l2);
            bool has3 = has2 && next_word(line, n, &i, &w3, &l3);
            bool has4 = has3 && next_word(line, n, &i, &w4, &l4);
            if (word_is(w1, l1, "allow") && has3 && !has4) {
                st = add_n(p, STG_POLICY_ALLOW, w2, l2, w3, l3, true);
            } else if (word_is(w1, l1, "deny") && has2 && !has4) {
                st = add_n(p, STG_POLICY_DENY, w2, l2, has3 ? w3 : NULL, has3 ? l3 : 0, has3);
            } else {
                st = STG_E_INVALID;
            }
        }
        if (st != STG_OK) {
            if (err_line != NULL) {
                *err_line = lineno;
            }
            return st == STG_E_NOMEM ? STG_E_NOMEM : STG_E_INVALID;
        }
        if (nl == NULL) {
            break;
        }
    }
    return STG_OK;
}
