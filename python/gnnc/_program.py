"""gnnc.Graph and gnnc.compile: gnn programs from Python."""

import functools
import os

import numpy as np

from . import _core
from ._arrays import NUMPY_DTYPES, as_array, results
from ._core import Error


class Graph:
    """A graph given by its edges (COO): edge i goes from source node
    ``src[i]`` to destination node ``dst[i]``.

    ``num_src`` and ``num_dst`` count the nodes on each side; when neither
    is given, both are one more than the largest id (a graph on one set of
    nodes, as DGL counts them); when one is given, the other is the same.
    """

    def __init__(self, src, dst, num_src, num_dst):
        self.src = src
        self.dst = dst
        self.num_src = num_src
        self.num_dst = num_dst

    @classmethod
    def from_coo(cls, src, dst, num_src=None, num_dst=None):
        """A graph from integer arrays (numpy, torch, lists) of source and
        destination node ids."""
        ids = []
        for name, value in (("src", src), ("dst", dst)):
            array, _ = as_array(value, name)
            if array.ndim != 1:
                raise Error(f"Graph.from_coo: '{name}' must be 1-D, got "
                            f"shape {tuple(array.shape)}")
            if array.size and not np.issubdtype(array.dtype, np.integer):
                raise Error(f"Graph.from_coo: '{name}' must hold integer "
                            f"node ids, got {array.dtype}")
            array = np.ascontiguousarray(array, dtype=np.int64)
            # Read-only views (of torch tensors, through DLPack) are copied:
            # torch.compile wraps writable arrays only.
            ids.append(array if array.flags.writeable else array.copy())
        src, dst = ids
        if src.shape != dst.shape:
            raise Error(f"Graph.from_coo: {src.size} source ids but "
                        f"{dst.size} destination ids")
        for name, count in (("num_src", num_src), ("num_dst", num_dst)):
            if count is not None and (isinstance(count, bool) or
                                      not isinstance(count, (int, np.integer))
                                      or count < 0):
                raise Error(f"Graph.from_coo: {name} must be a non-negative "
                            f"integer, got {count!r}")
        if num_src is None and num_dst is None:
            largest = max(int(src.max(initial=-1)), int(dst.max(initial=-1)))
            num_src = num_dst = largest + 1
        elif num_src is None:
            num_src = num_dst
        elif num_dst is None:
            num_dst = num_src
        for name, array, count in (("src", src, num_src), ("dst", dst,
                                                            num_dst)):
            if array.size and (array.min() < 0 or array.max() >= count):
                bad = array[(array < 0) | (array >= count)][0]
                raise Error(f"Graph.from_coo: {name} id {bad} is out of "
                            f"range [0, {count})")
        return cls(src, dst, int(num_src), int(num_dst))

    @classmethod
    def from_dgl(cls, graph):
        """A graph from a DGL graph (its edges in edge-id order)."""
        u, v = graph.edges(order="eid")
        return cls.from_coo(u, v, num_src=graph.num_src_nodes(),
                            num_dst=graph.num_dst_nodes())

    @property
    def num_edges(self):
        return int(self.src.size)

    def tensors(self, prefix=""):
        """The tensors gnn-run's --graph file holds for this graph."""
        return {
            prefix + "src": self.src,
            prefix + "dst": self.dst,
            prefix + "num_src": np.array(self.num_src, dtype=np.int64),
            prefix + "num_dst": np.array(self.num_dst, dtype=np.int64),
        }

    def __repr__(self):
        return (f"Graph(num_src={self.num_src}, num_dst={self.num_dst}, "
                f"num_edges={self.num_edges})")


def _threads(threads):
    if threads is None:
        return 0
    if isinstance(threads, bool) or not isinstance(threads, int) or not (
            1 <= threads <= 4096):
        raise Error(f"threads must be between 1 and 4096 (None: all cores), "
                    f"got {threads!r}")
    return threads


def _cache_dir(cache_dir):
    """None: the default cache directory (""); False: no cache (None)."""
    if cache_dir is None:
        return ""
    if cache_dir is False:
        return None
    return os.fspath(cache_dir)


def _source(path_or_text):
    """(text or path, is it a path)."""
    if isinstance(path_or_text, os.PathLike):
        return os.fspath(path_or_text), True
    if not isinstance(path_or_text, str):
        raise Error("compile takes a path or a program's text, got "
                    f"{type(path_or_text).__name__}")
    looks_like_text = "\n" in path_or_text or "{" in path_or_text
    return path_or_text, not looks_like_text


class Program:
    """A compiled gnn program. Call it with its graph and inputs by name;
    ``grad`` runs its gradient (compiled on first use)."""

    def __init__(self, source, is_path, fuse, device, threads, cache_dir,
                 entry):
        # The entry, or (grad=True) its gradient, compiled alike.
        self._compile = functools.partial(_core.CompiledProgram, source,
                                          is_path, fuse, device, threads,
                                          cache_dir, entry)
        self._program = self._compile(grad=False)
        self._grad = None

    @property
    def parameters(self):
        """The entry's parameters: dicts of name, graph and (tensors)
        dtype and shape (None where dynamic)."""
        return self._program.parameters()

    @property
    def results(self):
        """The entry's results, described as parameters are."""
        return self._program.results()

    @property
    def entry(self):
        return self._program.entry

    @property
    def closed(self):
        return self._program.closed

    @property
    def cache_hit(self):
        """The program's object code came from the compile cache."""
        return self._program.cache_hit

    def __call__(self, graph=None, **inputs):
        """Runs the entry; its results by name (numpy arrays, or torch
        tensors when torch tensors came in)."""
        return _run(self._program, graph, inputs)

    def grad(self, graph=None, **inputs):
        """Runs the entry's gradient: its results, then ``grad.<name>`` for
        each float argument (the gradient of the first result), as
        ``gnn-run --grad`` writes them."""
        if self._program.closed:
            raise Error("the program is closed")
        if self._grad is None:
            self._grad = self._compile(grad=True)
        return _run(self._grad, graph, inputs)

    def close(self):
        """Frees the compiled code; calling the program afterwards raises
        gnnc.Error."""
        self._program.close()
        if self._grad is not None:
            self._grad.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = "closed" if self.closed else f"entry '{self.entry}'"
        return f"<gnnc.Program {state}>"


def _graph_tensors(program, graph, inputs):
    """The graph tensors for the program's graph parameters, taking graphs
    from `graph` (a Graph, or a dict by parameter name) and from keyword
    arguments that are Graphs; those are removed from `inputs`."""
    named = {k: v for k, v in inputs.items() if isinstance(v, Graph)}
    for k in named:
        del inputs[k]
    if isinstance(graph, dict):
        named.update(graph)
        graph = None
    elif graph is not None and not isinstance(graph, Graph):
        raise Error("graph must be a gnnc.Graph (or a dict of them by "
                    f"parameter name), got {type(graph).__name__}")
    if graph is None and not named:
        return {}
    params = [p["name"] for p in program.parameters() if p["graph"]]
    if not params:
        raise Error(f"'{program.entry}' takes no graph")
    if graph is not None:
        if len(params) > 1:
            raise Error(f"'{program.entry}' takes {len(params)} graphs "
                        f"({', '.join(params)}): pass graph={{name: Graph}}")
        named.setdefault(params[0], graph)
    tensors = {}
    for name, g in named.items():
        if name not in params:
            raise Error(f"'{program.entry}' has no graph parameter '{name}'")
        if not isinstance(g, Graph):
            raise Error(f"graph '{name}' must be a gnnc.Graph, got "
                        f"{type(g).__name__}")
        tensors.update(g.tensors("" if len(params) == 1 else name + "."))
    return tensors


def _run(program, graph, inputs):
    if program.closed:
        raise Error("the program is closed")
    graphs = _graph_tensors(program, graph, inputs)
    dtypes = {p["name"]: NUMPY_DTYPES.get(p.get("dtype", ""))
              for p in program.parameters() if not p["graph"]}
    arrays, as_torch = {}, False
    for name, value in inputs.items():
        arrays[name], was_torch = as_array(value, name, dtypes.get(name))
        as_torch = as_torch or was_torch
    return results(program.run(graphs, arrays), as_torch)


def compile(path_or_text, fuse=True, device="cpu", threads=None,
            cache_dir=None, entry="main"):
    """Compiles a gnn program (a path, or its text) for `device`, through
    the compile cache (``cache_dir``: None for the default directory,
    False for none)."""
    source, is_path = _source(path_or_text)
    return Program(source, is_path, bool(fuse), device, _threads(threads),
                   _cache_dir(cache_dir), entry)
