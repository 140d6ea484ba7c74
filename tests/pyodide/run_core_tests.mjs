// Runs pyplay's own pytest modules inside Pyodide in Node: the same core, the same numbers.
// usage: node run_core_tests.mjs <site pyodide dir> <pure wheels dir> <repo root> <tests...>
import { createRequire } from "node:module";
import path from "node:path";

const [indexDir, pureDir, repoRoot, ...tests] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const { loadPyodide } = require(path.join(indexDir, "pyodide.js"));

const pyodide = await loadPyodide({ indexURL: indexDir + path.sep });
await pyodide.loadPackage(["numpy", "packaging", "pyplay"], { messageCallback: () => {} });
pyodide.FS.mkdir("/repo");
pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: repoRoot }, "/repo");
pyodide.FS.mkdir("/pure");
pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: pureDir }, "/pure");
pyodide.globals.set("TESTS", pyodide.toPy(tests));
const code = await pyodide.runPythonAsync(`
import os, sys
sys.path.insert(0, "/pure")
os.chdir("/repo/tests")  # so that pyplay comes from the installed wheel, not the tree
sys.dont_write_bytecode = True
import numpy, pyplay, pytest
print(f"pyodide: python {sys.version.split()[0]}, numpy {numpy.__version__}, "
      f"platform {sys.platform}, pyplay from {pyplay.__file__}")
pytest.main(["-q", "-p", "no:cacheprovider", "-o", "addopts=", *TESTS])
`);
process.exit(Number(code));
