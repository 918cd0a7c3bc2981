"""Arrays of any library of the Python array API standard, on any device.

The eigendecomposition-bound solvers are written against the standard
(https://data-apis.org/array-api/), as scikit-learn's ``sklearn.utils._array_api`` is: the
namespace ``xp`` of the input arrays (found by ``array_api_compat``) does the work, so a PyTorch
or CuPy array on a GPU stays there, and the products, eigendecompositions and projections run
there.  NumPy stays the default and keeps its fast paths (LAPACK by index through SciPy, in-place
updates): :func:`is_numpy` says where they apply.

The inputs of one solve must share one namespace, one device and one floating dtype
(:func:`check_arrays`): a mix is refused naming the arguments, never copied back and forth in
the loop.  ``float16`` and ``bfloat16`` are refused (an eigendecomposition in 11 or 8 bits of
mantissa certifies nothing); ``float32`` is an option, with a rounding allowance scaled to its
unit roundoff (:func:`unit_roundoff`); ``float64`` is the default.
"""

from __future__ import annotations

import sys
from types import ModuleType

import numpy as np

from ._memory import MemoryNeed, format_bytes

__all__ = ["Arrays", "add_to_diagonal", "check_arrays", "check_device_memory", "check_square", "device_free_bytes",
           "device_namespace", "device_of", "diagonal", "dtype_unit_roundoff", "eigh", "is_foreign", "is_numpy",
           "library", "namespace_of", "to_namespace", "to_numpy", "unit_roundoff"]

_REFUSED_DTYPES = ("float16", "bfloat16")


def _compat():
    import array_api_compat  # noqa: PLC0415 -- a dependency needed only off NumPy's fast path

    return array_api_compat


def namespace_of(x) -> ModuleType:
    """The array API namespace of ``x``: NumPy's compatible namespace for NumPy arrays (and Python
    scalars), the library's own (through ``array_api_compat``) for the others."""
    if isinstance(x, (np.ndarray, np.generic, float, int)):
        return _compat().array_namespace(np.asarray(x))
    return _compat().array_namespace(x)


def is_numpy(xp: ModuleType) -> bool:
    """Whether ``xp`` is NumPy (or ``array_api_compat``'s wrapper of it): the fast paths apply."""
    return xp is np or _compat().is_numpy_namespace(xp)


class Arrays:
    """The namespace, device and dtype that the arrays of one solve share (:func:`check_arrays`)."""

    def __init__(self, xp: ModuleType, device, dtype):
        self.xp, self.device, self.dtype = xp, device, dtype

    @property
    def numpy(self) -> bool:
        """Whether the arrays are NumPy's (on the CPU)."""
        return is_numpy(self.xp)

    @property
    def eps(self) -> float:
        """The unit roundoff of the dtype (:func:`unit_roundoff`)."""
        return unit_roundoff(self.xp, self.dtype)

    def asarray(self, x):
        """``x`` (a NumPy array or a number) as an array of this namespace, device and dtype."""
        return to_namespace(x, self.xp, self.device, self.dtype)

    def __repr__(self) -> str:
        return f"Arrays({library(self.xp)}, device={self.device!r}, dtype={self.dtype})"


def library(xp: ModuleType) -> str:
    """The name of the array library behind ``xp`` (``"torch"`` for ``array_api_compat.torch``)."""
    return xp.__name__.removeprefix("array_api_compat.")


def _dtype_name(dtype) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def check_arrays(**named) -> Arrays:
    """The namespace, device and dtype shared by the named arrays (None values are skipped;
    Python numbers and NumPy scalars go with any namespace).

    Raises
    ------
    TypeError
        Naming two arguments from different array libraries, an argument of a library without
        ``linalg.eigh``, or one of a dtype other than float32 or float64 (integers and booleans
        are accepted and taken as float64 in NumPy, refused elsewhere, where a silent cast would
        copy on the device).
    ValueError
        Naming two arguments on different devices, or two of different floating dtypes.
    """
    first = None
    for name, x in named.items():
        if x is None or isinstance(x, (float, int, np.generic)) or np.ndim(x) == 0 and isinstance(x, np.ndarray):
            continue
        try:
            xp = namespace_of(x)
        except TypeError:
            raise TypeError(f"{name} must be an array of NumPy or of a library of the Python array API standard, "
                            f"got {type(x).__name__}") from None
        device = _compat().device(x)
        dtype = x.dtype
        numpy = is_numpy(xp)
        if _dtype_name(dtype) in _REFUSED_DTYPES:
            raise TypeError(f"{name} has dtype {_dtype_name(dtype)}: the solvers need float32 or float64 "
                            "(an eigendecomposition in half precision certifies nothing)")
        if not xp.isdtype(dtype, "real floating"):
            if numpy and not xp.isdtype(dtype, ("integral", "bool")):
                raise TypeError(f"{name} has dtype {_dtype_name(dtype)}: the solvers need real numbers")
            if not numpy:
                raise TypeError(f"{name} has dtype {_dtype_name(dtype)}: arrays of {library(xp)} must be float32 or "
                                "float64 (cast it before the call: a cast here would copy it on its device)")
            dtype = np.dtype(np.float64)
        if not hasattr(getattr(xp, "linalg", None), "eigh"):
            raise TypeError(f"{name} is an array of {library(xp)}, which has no linalg.eigh: the solvers need "
                            "the standard's linalg extension")
        if first is None:
            first = (name, xp, device, dtype, numpy)
            continue
        name0, xp0, device0, dtype0, numpy0 = first
        if xp is not xp0 and not (numpy and numpy0):
            raise TypeError(f"{name} is an array of {library(xp)} and {name0} one of {library(xp0)}: pass all "
                            "arrays of one solve from one library")
        if device != device0:
            raise ValueError(f"{name} is on device {device!r} and {name0} on {device0!r}: move them to one device "
                             "before the call")
        if dtype != dtype0 and not (numpy and numpy0):
            raise ValueError(f"{name} has dtype {_dtype_name(dtype)} and {name0} {_dtype_name(dtype0)}: pass one "
                             "floating dtype")
    if first is None:
        return Arrays(namespace_of(np.zeros(0)), "cpu", np.dtype(np.float64))
    _, xp, device, dtype, numpy = first
    return Arrays(xp, device, np.dtype(np.float64) if numpy else dtype)


def device_namespace(device, dtype=None) -> Arrays:
    """The namespace, device and dtype for ``device=`` (``"cpu"``, ``"cuda"``, ``"cuda:1"``, a
    ``torch.device``), with PyTorch: ``"cpu"`` alone, or None, is NumPy.  ``dtype`` is
    ``"float64"`` (default) or ``"float32"``.

    Raises
    ------
    TypeError
        Naming ``dtype`` unless it is float32 or float64.
    ValueError
        Naming ``device`` where PyTorch is not installed or does not know the device, or where
        the device is not available.
    """
    try:  # NumPy's names, types and dtypes ("float32", np.float32, np.dtype("float32")), then the others'
        dtype_name = "float64" if dtype is None else np.dtype(dtype).name
    except TypeError:
        dtype_name = _dtype_name(getattr(dtype, "name", dtype))
    if dtype_name not in ("float32", "float64"):
        raise TypeError(f"dtype must be 'float32' or 'float64', got {dtype!r}")
    if device is None or (isinstance(device, str) and device == "cpu" and dtype_name == "float64"):
        return Arrays(namespace_of(np.zeros(0)), "cpu", np.dtype(np.float64))
    if isinstance(device, str) and device == "cpu":
        return Arrays(namespace_of(np.zeros(0, dtype=dtype_name)), "cpu", np.dtype(dtype_name))
    try:
        import torch  # noqa: PLC0415 -- optional: only device= needs it
    except ImportError:
        raise ValueError(f"device={device!r} needs PyTorch (pip install torch); or pass arrays of an array API "
                         "library that are already on the device") from None
    try:
        where = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(f"device must be 'cpu', 'cuda', 'cuda:<index>' or a torch.device, got {device!r}") from None
    if where.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r}: PyTorch sees no CUDA device here")
    if where.type == "cuda" and where.index is None:  # the index a tensor made there reports
        where = torch.device("cuda", torch.cuda.current_device())
    return Arrays(_compat().array_namespace(torch.zeros(0)), where, getattr(torch, dtype_name))


def to_namespace(x, xp: ModuleType, device=None, dtype=None):
    """``x`` (a NumPy array, a number, or an array of ``xp``) as an array of ``xp`` on ``device``
    with ``dtype``; a copy only where one of them differs."""
    if is_numpy(xp):
        return np.asarray(x, dtype=dtype)
    if isinstance(x, (np.ndarray, np.generic, float, int)):
        x = np.asarray(x, dtype=_dtype_name(dtype) if dtype is not None else None)
        return xp.asarray(x, device=device)
    return xp.asarray(x, device=device, dtype=dtype)


def device_of(x):
    """The device of the array ``x`` (``array_api_compat.device``)."""
    return _compat().device(x)


def to_numpy(x) -> np.ndarray:
    """``x`` as a NumPy array (copied from its device where it is elsewhere)."""
    if x is None or isinstance(x, (np.ndarray, np.generic, float, int)):
        return x if x is None else np.asarray(x)
    compat = _compat()
    if compat.is_torch_array(x):
        return x.detach().cpu().numpy()
    if compat.is_cupy_array(x):
        return x.get()
    try:
        return np.asarray(x)
    except (TypeError, ValueError, RuntimeError):  # array-api-strict on a non-CPU device
        xp = compat.array_namespace(x)
        return np.asarray(xp.asarray(x, device=compat.device(xp.zeros(0)), copy=True))


def unit_roundoff(xp: ModuleType, dtype) -> float:
    """The unit roundoff ``eps`` of ``dtype`` (2.2e-16 for float64, 1.2e-7 for float32): the
    rounding allowances of the certificates are multiples of it."""
    return float(xp.finfo(dtype).eps)


def dtype_unit_roundoff(dtype) -> float:
    """The unit roundoff of ``dtype``, given by name (``"float32"``), as a NumPy dtype or as
    another library's (``torch.float32``); None is float64, NumPy's default."""
    try:
        name = np.dtype(dtype).name  # None gives float64
    except TypeError:
        name = _dtype_name(getattr(dtype, "name", dtype))
    return float(np.finfo(name).eps)


def eigh(A, xp: ModuleType | None = None):
    """Eigenvalues in ascending order and eigenvectors of the symmetric ``A``, on its device."""
    xp = namespace_of(A) if xp is None else xp
    if is_numpy(xp):
        return np.linalg.eigh(A)
    w, V = xp.linalg.eigh(A)
    return w, V


def diagonal(A, xp: ModuleType | None = None):
    """The main diagonal of the square ``A`` (a view in NumPy and PyTorch)."""
    xp = namespace_of(A) if xp is None else xp
    if is_numpy(xp):
        return np.diagonal(A)
    return xp.linalg.diagonal(A)


def add_to_diagonal(A, value, xp: ModuleType | None = None):
    """``A + Diag(value)`` (a number or a vector), in place where the library allows it (NumPy,
    PyTorch, CuPy); returns the result, which the caller must use."""
    xp = namespace_of(A) if xp is None else xp
    compat = _compat()
    if is_numpy(xp):
        np.einsum("ii->i", A)[...] += value
        return A
    if compat.is_torch_array(A):
        A.diagonal().add_(value)
        return A
    if compat.is_cupy_array(A):
        import cupy  # noqa: PLC0415

        cupy.einsum("ii->i", A)[...] += value
        return A
    n = A.shape[0]
    eye = xp.eye(n, dtype=A.dtype, device=compat.device(A))
    return A + eye * (value if isinstance(value, (float, int)) or getattr(value, "ndim", 1) == 0 else value[None, :])


def device_free_bytes(device) -> int | None:
    """Free memory on a CUDA ``device`` (PyTorch's ``mem_get_info``); None elsewhere."""
    torch = sys.modules.get("torch")  # a CUDA device exists only where PyTorch was imported
    if torch is None:
        return None
    if isinstance(device, torch.device) and device.type == "cuda" or isinstance(device, str) and "cuda" in device:
        free, _ = torch.cuda.mem_get_info(torch.device(device))
        return int(free)
    return None


def check_device_memory(nbytes: float, what: str, arrays: Arrays, instead: str) -> None:
    """Raise :class:`~cvxclust._memory.MemoryNeed` (a ValueError) where ``nbytes`` exceed the free
    memory of the device of ``arrays`` (a CUDA device; elsewhere the host's check applies)."""
    free = device_free_bytes(arrays.device)
    if free is not None and nbytes > free:
        raise MemoryNeed(f"{what} needs {format_bytes(nbytes)} on {arrays.device} and {format_bytes(free)} is free "
                         f"there: {instead}")


def is_foreign(x) -> bool:
    """Whether ``x`` is an array of an array API library other than NumPy (PyTorch, CuPy,
    array-api-strict, ...): such arrays are checked and used in their own namespace."""
    if isinstance(x, (np.ndarray, np.generic, list, tuple, float, int)) or x is None:
        return False
    compat = _compat()
    return compat.is_array_api_obj(x) and not compat.is_numpy_array(x)


def check_square(K, name: str = "K", *, symmetric: bool = True, nonnegative: bool = False, min_size: int = 1,
                 rtol: float = 1e-10):
    """The checks of :func:`cvxclust._checks.check_square_matrix` for an array of another array
    API library, in its namespace and on its device (:func:`check_arrays` refuses its dtype
    unless float32 or float64); symmetric inputs are symmetrised exactly, never in place."""
    arrays = check_arrays(**{name: K})
    xp = arrays.xp
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {tuple(K.shape)}")
    if K.shape[0] < min_size:
        raise ValueError(f"{name} must be at least {min_size} x {min_size}, got {tuple(K.shape)}")
    if not bool(xp.all(xp.isfinite(K))):
        raise ValueError(f"{name} contains NaN or infinite entries")
    if symmetric:
        # a matrix rounded to a narrower dtype is symmetric only to about sqrt(n) times its precision
        rtol = max(rtol, float(np.sqrt(K.shape[0])) * unit_roundoff(xp, K.dtype))
        scale = max(float(xp.max(xp.abs(K))), 1e-300)
        if float(xp.max(xp.abs(K - K.T))) > rtol * scale:
            raise ValueError(f"{name} must be symmetric")
        K = (K + K.T) / 2
    if nonnegative and float(xp.min(K)) < 0:
        raise ValueError(f"{name} must have nonnegative entries (min {float(xp.min(K)):.3g})")
    return K
