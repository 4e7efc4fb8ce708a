"""gnnc from Python: compile and run gnn programs, decode with compiled
Transformers, and train them as gnn-train does.

    import gnnc
    g = gnnc.Graph.from_coo(src, dst)
    prog = gnnc.compile("attention.mlir")
    outs = prog(graph=g, q=q, k=k, v=v)
    m = gnnc.Transformer.load("examples/copy/config.json")
    m.decode(["3 4 5 6"])

``gnnc.torch`` (imported on its own, where PyTorch is installed) has fused
attention as a PyTorch op with its backward.
"""

from ._core import Error
from ._model import Transformer
from ._program import Graph, Program, compile
from ._train import train

__all__ = ["Error", "Graph", "Program", "Transformer", "compile", "train"]
__version__ = "0.1.0"
