"""Checks the peers' environment: DGL imports with this torch (its graphbolt
library is built per torch version), torch multiplies matrices on an
optimized BLAS (MKL or OpenBLAS; the reference BLAS is ~50x slower) and
uses every core. Exits non-zero with the reason otherwise."""

import os
import sys


def main():
    try:
        import torch
    except ImportError as e:
        sys.exit("peers: cannot import torch: %s" % e)
    try:
        import dgl
    except Exception as e:  # graphbolt raises FileNotFoundError and others
        sys.exit("peers: DGL does not load with torch %s: %s\n"
                 "pin a torch that DGL's wheel has a graphbolt library for "
                 "(bench/peers/requirements.txt)" % (torch.__version__, e))
    config = torch.__config__.show()
    blas = [b for b in ("mkl", "openblas") if "BLAS_INFO=" + b in config]
    if not blas:
        sys.exit("peers: torch %s is not built on MKL or OpenBLAS:\n%s"
                 % (torch.__version__, config))
    cores = os.cpu_count()
    if torch.get_num_threads() < cores:
        sys.exit("peers: torch uses %d threads of %d cores (unset "
                 "OMP_NUM_THREADS / MKL_NUM_THREADS)"
                 % (torch.get_num_threads(), cores))
    print("peers: torch %s (BLAS %s, %d threads), DGL %s" %
          (torch.__version__, blas[0], torch.get_num_threads(),
           dgl.__version__))


if __name__ == "__main__":
    main()
