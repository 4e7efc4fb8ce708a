# -*- Python -*-
# lit configuration of the gnnc regression and integration tests.

import os
import sys

import lit.formats
from lit.llvm import llvm_config

config.name = "GNN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py", "Inputs", "Shared", "__pycache__", "golden", "golden-ut"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.gnn_obj_root, "test")

config.substitutions.append(("%gnn_src_root", config.gnn_src_root))
# The interpreter running lit: a real binary, not a shell shim.
config.substitutions.append(("%python", sys.executable))

llvm_config.use_default_substitutions()
llvm_config.add_tool_substitutions(["FileCheck", "not", "count"], [config.llvm_tools_dir])
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.gnn_tools_dir, append_path=True)
# The suite keeps its compiled programs apart from the user's cache; tests of
# the cache itself pass a fresh --cache-dir.
config.environment["GNNC_CACHE_DIR"] = os.path.join(
    config.gnn_obj_root, "test", "compile-cache")

# GNNC_CHECKED=1 (the sanitizer job) runs every compiled program of the
# suite with its memory accesses checked.
if os.environ.get("GNNC_CHECKED"):
    config.environment["GNNC_CHECKED"] = os.environ["GNNC_CHECKED"]

# Open MPI's settings of the machine (a test machine without ssh selects
# its single-node launcher with OMPI_MCA_plm=isolated) reach the tests
# that launch ranks.
for name, value in os.environ.items():
    if name.startswith("OMPI_MCA_"):
        config.environment[name] = value

# %limit_memory runs a command with at most 2 GiB of memory: tests that
# input is rejected before a large allocation. AddressSanitizer's shadow
# memory needs terabytes of address space, so under it the cap is on each
# allocation instead.
if config.gnn_sanitize:
    config.available_features.add("asan")
    asan = os.environ.get("ASAN_OPTIONS", "")
    config.substitutions.append(
        ("%limit_memory",
         "env ASAN_OPTIONS=%s:max_allocation_size_mb=2048" % asan))
else:
    config.substitutions.append(
        ("%limit_memory", "sh -c 'ulimit -v 2097152; exec \"$@\"' sh"))

tools = ["gnn-opt", "gnn-run", "gnn-train", "gnn-bench-attention", "gnn-bench-act",
         "gnn-bench-dense"]
if config.gnn_fuzz_tests:
    tools.append("gnn-mutate")
    config.available_features.add("fuzz")
llvm_config.add_tool_substitutions(tools, [config.gnn_tools_dir])

import subprocess  # noqa: E402


def python_feature(feature, substitution, imports, candidates):
    """Adds `feature`, with `substitution` naming the first of `candidates`
    (Python interpreters) that can run `import <imports>`."""
    for candidate in candidates:
        if os.access(candidate, os.X_OK) and subprocess.run(
                [candidate, "-c", "import " + imports],
                capture_output=True).returncode == 0:
            config.available_features.add(feature)
            config.substitutions.append((substitution, candidate))
            return


# Plotting scripts need matplotlib and Pillow (Debian's python3-matplotlib and
# python3-pil, which setup.sh installs for /usr/bin/python3).
python_feature("matplotlib", "%plot_python", "matplotlib, PIL",
               (sys.executable, "/usr/bin/python3"))
# `torch`: a Python with PyTorch (the peers' environment where
# bench/peers/setup.sh made one) reads old-format torch.save files.
python_feature("torch", "%torch_python", "torch",
               (sys.executable, "/usr/bin/python3",
                os.path.join(config.gnn_src_root, "bench", "peers", ".venv",
                             "bin", "python")))

# GPU tests. `ptxas`: the CUDA toolkit's assembler checks generated kernels
# (no device needed). `cuda-device`: a driver and a device are present, so
# kernels run; without one those tests are unsupported, not failed.
cuda_path = os.environ.get("CUDA_PATH", "/usr/local/cuda")
ptxas = os.path.join(cuda_path, "bin", "ptxas")
if os.access(ptxas, os.X_OK):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))


# bench/gpu/host-cost's stand-in CUDA driver and cuBLAS (kernels do nothing).
config.substitutions.append(
    ("%stand_in_driver",
     os.path.join(config.gnn_obj_root, "bench", "stand-in-driver")))
# The unit tests, some of which also run on the stand-in driver.
config.substitutions.append(
    ("%gnn_runtime_tests",
     os.path.join(config.gnn_obj_root, "unittests", "GNNRuntimeTests")))
config.substitutions.append(
    ("%gnn_unit_tests",
     os.path.join(config.gnn_obj_root, "unittests", "GNNUnitTests")))


def cuda_device_present():
    import ctypes
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        count = ctypes.c_int(0)
        return (cuda.cuInit(0) == 0 and
                cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 and
                count.value > 0)
    except OSError:
        return False


if cuda_device_present():
    config.available_features.add("cuda-device")


def nccl_present():
    import ctypes
    try:
        ctypes.CDLL("libnccl.so.2")
        return True
    except OSError:
        return False


# `nccl`: NCCL's library loads (gnn-train loads it at run time).
if nccl_present():
    config.available_features.add("nccl")

# `mpi`: Open MPI's launcher (setup.sh installs it) and gnnc's MPI plugin.
# CI runs as root, which mpirun refuses unless told; three ranks on two
# cores need --oversubscribe.
import shutil  # noqa: E402

mpirun = shutil.which("mpirun")
if mpirun and os.path.exists(
        os.path.join(config.gnn_obj_root, "lib", "libgnnc-mpi.so")):
    config.available_features.add("mpi")
    launch = "timeout 300 %s --allow-run-as-root --oversubscribe" % mpirun
    if config.gnn_sanitize:
        # Open MPI's libraries keep allocations to the end and have no frame
        # pointers, so LeakSanitizer can neither tell its blocks from
        # gnnc's nor suppress them: ranks run with ASan and UBSan but
        # without leak checks (one process keeps them).
        asan = os.environ.get("ASAN_OPTIONS", "")
        launch = "env ASAN_OPTIONS=%s:detect_leaks=0 %s -x ASAN_OPTIONS" % (
            asan, launch)
    config.substitutions.append(("%mpirun", launch))
    # Network namespaces joined by a veth pair: two hosts on one machine.
    probe = "gnnc-probe-%d" % os.getpid()
    if os.geteuid() == 0 and shutil.which("ip") and shutil.which(
            "unshare") and subprocess.run(
                ["ip", "netns", "add", probe],
                capture_output=True).returncode == 0:
        subprocess.run(["ip", "netns", "del", probe], capture_output=True)
        config.available_features.add("netns")
