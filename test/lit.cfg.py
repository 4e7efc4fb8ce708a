# -*- Python -*-
# lit configuration of the gnnc regression and integration tests.

import os
import sys

import lit.formats
from lit.llvm import llvm_config

config.name = "GNN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py", "Inputs", "__pycache__", "golden", "golden-ut"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.gnn_obj_root, "test")

config.substitutions.append(("%gnn_src_root", config.gnn_src_root))
# The interpreter running lit: a real binary, not a shell shim.
config.substitutions.append(("%python", sys.executable))

llvm_config.use_default_substitutions()
llvm_config.add_tool_substitutions(["FileCheck", "not", "count"], [config.llvm_tools_dir])
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.gnn_tools_dir, append_path=True)

tools = ["gnn-opt", "gnn-run"]
if config.gnn_fuzz_tests:
    tools.append("gnn-mutate")
    config.available_features.add("fuzz")
llvm_config.add_tool_substitutions(tools, [config.gnn_tools_dir])
