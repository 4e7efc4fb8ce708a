"""Type stubs of the gnnc package."""

import os
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

PathLike = Union[str, "os.PathLike[str]"]
ArrayLike = Any  # numpy arrays, torch tensors, anything with __dlpack__

class Error(RuntimeError):
    """A gnnc error, with the one-line message the tools print."""

class Graph:
    src: np.ndarray
    dst: np.ndarray
    num_src: int
    num_dst: int
    @classmethod
    def from_coo(cls, src: ArrayLike, dst: ArrayLike,
                 num_src: Optional[int] = ...,
                 num_dst: Optional[int] = ...) -> "Graph": ...
    @classmethod
    def from_dgl(cls, graph: Any) -> "Graph": ...
    @property
    def num_edges(self) -> int: ...
    def tensors(self, prefix: str = ...) -> Dict[str, np.ndarray]: ...

class Program:
    @property
    def parameters(self) -> List[Dict[str, Any]]: ...
    @property
    def results(self) -> List[Dict[str, Any]]: ...
    @property
    def entry(self) -> str: ...
    @property
    def closed(self) -> bool: ...
    @property
    def cache_hit(self) -> bool: ...
    def __call__(self, graph: Union[Graph, Mapping[str, Graph], None] = ...,
                 **inputs: ArrayLike) -> Dict[str, Any]: ...
    def grad(self, graph: Union[Graph, Mapping[str, Graph], None] = ...,
             **inputs: ArrayLike) -> Dict[str, Any]: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Program": ...
    def __exit__(self, *exc: Any) -> None: ...

def compile(path_or_text: PathLike, fuse: bool = ..., device: str = ...,
            threads: Optional[int] = ...,
            cache_dir: Union[PathLike, None, bool] = ...,
            entry: str = ...) -> Program: ...

class Transformer:
    @classmethod
    def load(cls, config_path: PathLike,
             weights_path: Optional[PathLike] = ..., device: str = ...,
             threads: Optional[int] = ...,
             cache_dir: Union[PathLike, None, bool] = ..., fuse: bool = ...,
             ids: Optional[bool] = ...,
             max_len: Optional[int] = ...,
             allow_nonfinite: bool = ...) -> "Transformer": ...
    @property
    def config(self) -> Dict[str, Any]: ...
    def decode(self, lines: Sequence[str], mode: str = ..., beam: int = ...,
               alpha: float = ..., max_len: Optional[int] = ...,
               batch_size: int = ..., truncate: bool = ...) -> List[str]: ...
    def forward(self, src_lines: Sequence[str], tgt_lines: Sequence[str],
                batch_size: int = ...,
                truncate: bool = ...) -> Dict[str, np.ndarray]: ...
    def attention(self, src_line: str, tgt_line: Optional[str] = ...,
                  truncate: bool = ...) -> Dict[str, np.ndarray]: ...

def train(config_path: PathLike, train_src: PathLike, train_tgt: PathLike,
          out_dir: Optional[PathLike], valid_src: Optional[PathLike] = ...,
          valid_tgt: Optional[PathLike] = ...,
          callback: Optional[Callable[[Dict[str, Any]], Optional[bool]]] = ...,
          verbose: bool = ..., **options: Any) -> List[Dict[str, Any]]: ...
