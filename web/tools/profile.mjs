// Build step (run by build.py: web/tools/sitebuild/profile.py): start the app once in Pyodide
// under Node, exactly as the page's worker does (web/site/boot.py), then run the work the app
// queued for after its first render (pyplay.ui.later: saved work, the other lessons), and
//   - compile the bytecode of every module imported, with Pyodide's own Python 3.12:
//     stdlib modules into a copy of python_stdlib.zip (``x.pyc`` beside ``x.py``, which zipimport
//     prefers) and site-packages modules into two archives of ``__pycache__/*.pyc`` files that
//     the worker unpacks into site-packages: the first render's (``site-bytecode.zip``) and the
//     rest (``site-bytecode-later.zip``, unpacked after the first render); the build then puts
//     the first's files into ``site-startup.tar.gz`` with the first render's pure-Python wheels;
//   - record which packages the first render needs (``startup``), which the work after it
//     needs (``later``; loaded right after the render), and time each stage of the start
//     (the page's loader weighs its progress bar with these on a first visit).
// The .pyc files are "unchecked hash" pycs: Python uses them without comparing timestamps.
// Without them every page load compiles the same ~1,000 modules from source in WebAssembly.
//
// usage: node profile.mjs <site pyodide dir> <out dir> <config.json>
//   config: {"app": "module:function", "options": {kwargs}, "boot": "<path of boot.py>",
//            "packages": [names]}
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import path from "node:path";

const [indexDir, outDir, configPath] = process.argv.slice(2);
const config = JSON.parse(readFileSync(configPath, "utf8"));
const require = createRequire(import.meta.url);
// panel.io.pyodide imports these names from ``js``; a worker has them, Node does not.
globalThis.XMLHttpRequest = class {};
const { loadPyodide } = require(path.join(indexDir, "pyodide.js"));

const t0 = performance.now();
const pyodide = await loadPyodide({ indexURL: indexDir + path.sep });
const tRuntime = performance.now();
for (const [dir, mnt] of [[indexDir, "/site"], [outDir, "/out"]]) {
  pyodide.FS.mkdirTree(mnt);
  pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: dir }, mnt);
}
await pyodide.loadPackage(config.packages, { messageCallback: () => {} });
const tLoaded = performance.now();
pyodide.runPython(readFileSync(config.boot, "utf8"));
pyodide.globals.set("APP", config.app);
pyodide.globals.set("OPTIONS", JSON.stringify(config.options || {}));
pyodide.runPython("import_app(APP)");
const tImported = performance.now();
await pyodide.runPythonAsync("await start_app(APP, './panel/', OPTIONS)");
const tStarted = performance.now();
pyodide.runPython("import sys; FIRST = set(sys.modules)");
while (pyodide.runPython("run_later()") > 0);
const tLater = performance.now();

pyodide.globals.set("PACKAGES", pyodide.toPy(config.packages));
pyodide.globals.set("SECONDS", pyodide.toPy({
  runtime: (tRuntime - t0) / 1000, packages: (tLoaded - tRuntime) / 1000,
  modules: (tImported - tLoaded) / 1000, app: (tStarted - tImported) / 1000,
  later: (tLater - tStarted) / 1000,
}));
await pyodide.runPythonAsync(`
import importlib.util
import json
import os
import site
import sys
import zipfile
from importlib._bootstrap_external import _code_to_hash_pyc

SITE = site.getsitepackages()[0]
STDLIB = "/lib/python312.zip/"
DATE = (2020, 1, 1, 0, 0, 0)


def pyc(source: bytes, filename: str) -> bytes:
    code = compile(source, filename, "exec", dont_inherit=True)
    return bytes(_code_to_hash_pyc(code, importlib.util.source_hash(source), checked=False))


def add(z: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    z.writestr(info, data)


lock = json.load(open("/site/pyodide-lock.json"))
owner = {}  # path inside site-packages -> package that installs it
for name in PACKAGES:
    with zipfile.ZipFile("/site/" + lock["packages"][name]["file_name"]) as wheel:
        for member in wheel.namelist():
            owner[member] = name


def origins(modules) -> list[str]:
    return sorted({
        m.__spec__.origin for m in modules
        if getattr(m, "__spec__", None) is not None and m.__spec__.origin
    })


def site_files(paths) -> list[str]:
    return [os.path.relpath(o, SITE) for o in paths if o.startswith(SITE + "/")]


everything = list(sys.modules.values())
first = origins(m for name, m in list(sys.modules.items()) if name in FIRST)
later = sorted(set(origins(everything)) - set(first))
stdlib = [o for o in origins(everything) if o.startswith(STDLIB) and o.endswith(".py")]
first_files, later_files = site_files(first), site_files(later)
used = sorted({owner[f] for f in first_files if f in owner})
used_later = sorted({owner[f] for f in later_files if f in owner} - set(used))
# pyplay is small and its other modules load on the first clicks: compile all of it
for name in PACKAGES:
    if name in ("pyplay", "pyplay-app"):
        with zipfile.ZipFile("/site/" + lock["packages"][name]["file_name"]) as wheel:
            later_files += [m for m in wheel.namelist() if m.endswith(".py")]
later_files = sorted(set(later_files) - set(first_files))

n_std = 0
with zipfile.ZipFile("/site/python_stdlib.zip") as src, \\
        zipfile.ZipFile("/out/python_stdlib.zip", "w", zipfile.ZIP_DEFLATED) as dst:
    wanted = {o[len(STDLIB):] for o in stdlib}
    for info in src.infolist():
        data = src.read(info)
        dst.writestr(info, data)
        if info.filename in wanted:
            add(dst, info.filename + "c", pyc(data, STDLIB + info.filename))
            n_std += 1


def archive(target: str, files: list[str]) -> int:
    n = 0
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as dst:
        for rel in sorted(set(files)):
            if not rel.endswith(".py"):
                continue
            path = os.path.join(SITE, rel)
            with open(path, "rb") as f:
                source = f.read()
            try:
                data = pyc(source, path)
            except SyntaxError:
                continue  # compiled (and reported) at import, as without this archive
            add(dst, os.path.relpath(importlib.util.cache_from_source(path), SITE), data)
            n += 1
    return n


n_site = archive("/out/site-bytecode.zip", first_files)
n_later = archive("/out/site-bytecode-later.zip", later_files)

report = {"startup_packages": used, "later_packages": used_later, "stdlib_pyc": n_std,
          "site_pyc": n_site, "site_pyc_later": n_later, "seconds": dict(SECONDS)}
with open("/out/profile.json", "w") as f:
    json.dump(report, f, indent=1)
print(f"profile: {len(used)} packages at start, {len(used_later)} after it; {n_std} stdlib, "
      f"{n_site} + {n_later} site modules compiled")
`);
