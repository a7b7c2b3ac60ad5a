# lit configuration for LLVM's own filter-markup tests, run by
# scripts/llvm-lit.sh with llvm-symbolizer standing in for both tools (see
# the llvm-symbolizer script beside this file).
import os

import lit.formats

config.name = "llvm-filter-markup-vs-symfilter"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(__file__), "out")
config.available_features.add("x86-registered-target")
config.environment["PATH"] = os.pathsep.join(
    [lit_config.params["stand_in_dir"], lit_config.params["llvm_bin"], "/usr/bin", "/bin"]
)
config.environment["LLVM_SYMBOLIZER"] = os.path.join(lit_config.params["llvm_bin"], "llvm-symbolizer")
config.environment["SYMFILTER"] = lit_config.params["symfilter"]
for var in ("DEBUGINFOD_URLS", "NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE"):
    config.environment.pop(var, None)
