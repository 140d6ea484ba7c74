// Runs Python (Pyodide + NumPy + Panel + pyplay) off the main thread, so the page stays
// responsive while a model trains. Talks to index.html with Bokeh document patches.
"use strict";
const PACKAGES = __PACKAGES__;
const PYODIDE_URL = "__PYODIDE_URL__";
importScripts(PYODIDE_URL + "pyodide.js");

function sendPatch(patch, buffers, msgId) {
  self.postMessage({type: "patch", patch: patch, buffers: buffers});
}

function status(stage, msg) {
  self.postMessage({type: "status", stage: stage, msg: msg});
}

async function loadPackages() {
  if (Array.isArray(PACKAGES)) {  // offline build: every wheel is listed in our lock
    const deps = PACKAGES.filter((p) => p !== "pyplay");
    await self.pyodide.loadPackage(deps, {messageCallback: () => {}});
    status("pyplay", "Loading pyplay");
    await self.pyodide.loadPackage(["pyplay"], {messageCallback: () => {}});
    return new URL("./panel/", self.location).href;
  }
  await self.pyodide.loadPackage(PACKAGES.official, {messageCallback: () => {}});
  const micropip = self.pyodide.pyimport("micropip");
  await micropip.install(PACKAGES.pypi, {deps: false});
  status("pyplay", "Loading pyplay");
  await micropip.install(new URL(PACKAGES.local, self.location).href);
  return null;  // CDN variant: Panel's own CDN for its CSS
}

async function startApplication() {
  const t0 = performance.now();
  const timings = {};
  status("runtime", "Starting Python (Pyodide)");
  self.pyodide = await loadPyodide({indexURL: new URL(PYODIDE_URL, self.location).href});
  self.pyodide.globals.set("sendPatch", sendPatch);
  timings.runtime = performance.now() - t0;
  status("packages", "Loading NumPy, Panel and Bokeh");
  const distUrl = await loadPackages();
  timings.packages = performance.now() - t0;
  status("app", "Starting the playground");
  self.pyodide.globals.set("PYPLAY_DIST_URL", distUrl);
  const [docsJson, renderItems, rootIds] = await self.pyodide.runPythonAsync(`
from panel.io.pyodide import init_doc, write_doc
init_doc()
from panel.io.state import state
if PYPLAY_DIST_URL:
    state.curdoc._template_variables["dist_url"] = PYPLAY_DIST_URL
from pyplay.ui.app import create_app
create_app().servable()
await write_doc()
`);
  timings.app = performance.now() - t0;
  self.postMessage({type: "render", docs_json: docsJson, render_items: renderItems,
                    root_ids: rootIds, timings: timings});
}

self.onmessage = async (event) => {
  const msg = event.data;
  if (msg.type === "rendered") {
    self.pyodide.runPythonAsync(`
from panel.io.state import state
from panel.io.pyodide import _link_docs_worker
_link_docs_worker(state.curdoc, sendPatch, setter="js")
`);
  } else if (msg.type === "patch") {
    self.pyodide.globals.set("patch", msg.patch);
    await self.pyodide.runPythonAsync(`
from panel.io.pyodide import _convert_json_patch
state.curdoc.apply_json_patch(_convert_json_patch(patch), setter="js")
`);
    self.postMessage({type: "idle"});
  } else if (msg.type === "location") {
    self.pyodide.globals.set("location", msg.location);
    self.pyodide.runPythonAsync(`
import json
from panel.io.state import state
from panel.util import edit_readonly
if state.location:
    loc_data = json.loads(location)
    with edit_readonly(state.location):
        state.location.param.update({k: v for k, v in loc_data.items() if k in state.location.param})
`);
  } else if (msg.type === "run") {
    try {
      const value = await self.pyodide.runPythonAsync(msg.code);
      self.postMessage({type: "result", id: msg.id, value: String(value)});
    } catch (err) {
      self.postMessage({type: "result", id: msg.id, error: String(err)});
    }
  }
};

startApplication().catch((err) => {
  const lines = String(err).trim().split("\n");
  self.postMessage({type: "error", msg: lines[lines.length - 1]});
  console.error(err);
});
