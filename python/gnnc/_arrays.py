"""Arrays in and out: numpy arrays, PyTorch tensors and anything with
``__dlpack__`` go in without a copy where they are C-contiguous; results
come back as numpy arrays, or as torch tensors when torch tensors came in."""

import numpy as np

from ._core import Error

# gnnc's dtypes as the compiled programs name them, and numpy's.
NUMPY_DTYPES = {
    "F32": np.float32,
    "F64": np.float64,
    "I64": np.int64,
    "I32": np.int32,
    "I8": np.int8,
    "BOOL": np.bool_,
}


def _is_torch_tensor(value):
    return type(value).__module__.startswith("torch") and hasattr(
        value, "__dlpack__")


def as_array(value, name, dtype=None):
    """`value` as a C-contiguous numpy array (a view where possible), and
    whether it was a torch tensor. Lists and scalars take `dtype` (the
    parameter's); arrays keep theirs, which the program then checks."""
    if isinstance(value, np.ndarray):
        array = value
    elif _is_torch_tensor(value):
        if value.device.type != "cpu":
            raise Error(f"'{name}' is on device '{value.device}'; this gnnc "
                        "takes CPU tensors (move it with .cpu())")
        array = np.from_dlpack(value.detach())
        return np.ascontiguousarray(array), True
    elif hasattr(value, "__dlpack__"):
        array = np.from_dlpack(value)
    elif hasattr(value, "__array__") and not isinstance(value, (list, tuple)):
        array = np.asarray(value)
    else:
        try:
            array = np.asarray(value, dtype=dtype)
        except (TypeError, ValueError) as e:
            raise Error(f"'{name}' is not an array: {e}") from None
        if array.dtype == object:
            raise Error(f"'{name}' is not an array of numbers")
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    return np.ascontiguousarray(array), False


def results(arrays, as_torch):
    """The results, as torch tensors when the inputs were."""
    if not as_torch:
        return arrays
    import torch
    return {name: torch.from_numpy(a) for name, a in arrays.items()}
