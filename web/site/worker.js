// Runs Python (Pyodide + NumPy + Panel + pyplay) off the main thread, so the page stays
// responsive while a model trains. Talks to index.html with Bokeh document patches.
//
// Start-up, in the offline build (build.py fills in CONFIG: web/tools/sitebuild), each stage
// reported to the page's loader (status messages):
//   1. "runtime": Pyodide, with a copy of the standard library that carries compiled bytecode;
//   2. "packages": the packages the first render needs (build.py found them by starting the
//      app once in Pyodide under Node): those with compiled code by loadPackage (NumPy), the
//      pure-Python ones unpacked from one archive with the compiled bytecode of all of them;
//   3. "modules": importing the app's module, and with it NumPy, Bokeh and Panel;
//   4. "app": the app with its first lesson (web/site/boot.py), then the page draws it;
//   5. after the render: the packages and bytecode the queued work needs, that work one job
//      at a time (saved work at once, then the other lessons, each when no patch went either
//      way for a moment: pyplay.ui.later), then the packages nothing imported yet, so that
//      later imports work, then the lessons drawn into their hidden tabs, paced the same way
//      (drawAhead), and the page is "settled".
"use strict";
const CONFIG = __CONFIG__;
const PYODIDE_URL = "__PYODIDE_URL__";
// The site's address. A page of the site starts this file directly; a host page that embeds
// widgets (web/site/embed.js) starts it from a blob that sets PYPLAY_BASE first, since a
// worker cannot be started from another origin's URL.
const BASE = self.PYPLAY_BASE || self.location.href;
const EMBED_APP = "pyplay.ui.embed:create_embed";
importScripts(new URL(PYODIDE_URL, BASE).href + "pyodide.js");
importScripts(new URL("store.js", BASE).href);  // saved work in IndexedDB: js.pyplayStore

const quiet = {messageCallback: () => {}};
const t0 = performance.now();
// The first render's archive (its packages' files and bytecode) downloads and decompresses
// from the start, beside the runtime's; loadPackages writes it out (a failure is reported
// there).
const startupArchive = CONFIG.bytecode ? fetchTar(absolute(CONFIG.bytecode)) : null;
if (startupArchive) startupArchive.catch(() => {});
const timings = {};
let applyPatch = null;  // web/site/boot.py's apply_patch, once the app has started
let runLater = null;  // and its run_later
let drawNext = null;  // and its draw_ahead
let lastPatch = 0;  // when a patch last went either way (a click, typing, training's redraws)
let pageIdle = null;  // resolves when the page says it is idle after a lesson drawn ahead
let pageLoad = null;  // pyplay.ui.session.page_load, once the page first reports its load
// What to start, from the page's "start" message: {embed: null} for the whole playground, or
// {embed: [widget requests]} for embedded widgets (pyplay.ui.embed). The runtime and packages
// load while the page is still deciding.
let resolveStart = null;
// Whether the other lessons are built and drawn ahead, after the first render (the page's
// default). A page that shows one lesson and its controls only (the browser tests of one
// lesson, web/site/page.js: window.pyplayAhead = false) builds a lesson when its tab opens:
// building all of them ahead keeps the worker and the main thread busy for a minute.
let aheadWanted = true;
const started = new Promise((resolve) => { resolveStart = resolve; });

function sendPatch(patch, buffers, msgId) {
  lastPatch = performance.now();
  self.postMessage({type: "patch", patch: patch, buffers: buffers});
}

function status(stage, msg) {  // the build's profile weighs the loader's stages (page.js)
  self.postMessage({type: "status", stage: stage, msg: msg, weights: CONFIG.weights || null});
}

function absolute(url) {
  return url ? new URL(url, BASE).href : null;
}

async function fetchBytes(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.arrayBuffer();
}

function sitePackages() {
  return self.pyodide.runPython("import site; site.getsitepackages()[0]");
}

async function unpack(bytes) {
  self.pyodide.unpackArchive(await bytes, "zip", {extractDir: sitePackages()});
}

// The startup archive is a gzipped tar (web/tools/sitebuild/startup_archive.py): the
// browser decompresses it (DecompressionStream; a host that sent it with Content-Encoding:
// gzip has already), and writeTar puts each file into Pyodide's file system from JavaScript.
// Pyodide's unpackArchive extracts an archive in Python inside WebAssembly, file by file:
// for these 3,100 files 2-4 times as long.
async function fetchTar(url) {
  let bytes = new Uint8Array(await fetchBytes(url));
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    bytes = new Uint8Array(await new Response(stream).arrayBuffer());
  }
  return bytes;
}

// Write the regular files of a ustar archive (name and prefix fields, octal sizes) under
// folder `dir`.
function writeTar(bytes, dir) {
  const FS = self.pyodide.FS;
  const text = new TextDecoder();
  const field = (at, length) => {
    let end = at;
    while (end < at + length && bytes[end] !== 0) end++;
    return text.decode(bytes.subarray(at, end));
  };
  const made = new Set();
  for (let at = 0; at + 512 <= bytes.length && bytes[at] !== 0;) {
    const name = field(at, 100), prefix = field(at + 345, 155);
    const size = parseInt(field(at + 124, 12).trim() || "0", 8);
    const type = bytes[at + 156];
    at += 512;
    if (type === 48 || type === 0) {  // "0" (or NUL): a regular file
      const path = prefix ? `${prefix}/${name}` : name;
      if (path.startsWith("/") || path.split("/").includes("..")) {
        throw new Error(`startup archive: ${path} leaves site-packages`);
      }
      const full = `${dir}/${path}`;
      const folder = full.slice(0, full.lastIndexOf("/"));
      if (!made.has(folder)) {
        FS.mkdirTree(folder);
        made.add(folder);
      }
      FS.writeFile(full, bytes.subarray(at, at + size));
    }
    at += Math.ceil(size / 512) * 512;
  }
}

async function loadPackages() {
  await self.pyodide.loadPackage(CONFIG.startup, quiet);  // the offline site: NumPy
  if (CONFIG.micropip) {  // CDN variant: pure wheels from PyPI at exact versions, and pyplay
    const micropip = self.pyodide.pyimport("micropip");
    await micropip.install(CONFIG.micropip, {deps: false});
    for (const wheel of CONFIG.own || []) await micropip.install(absolute(wheel), {deps: false});
  }
  if (startupArchive) writeTar(await startupArchive, sitePackages());
  // The offline site's archive also holds the first render's pure-Python packages (one unpack
  // instead of one loadPackage each: web/tools/sitebuild/startup_archive.py): loaded, so that
  // a later loadPackage that depends on one of them does not fetch it again.
  for (const name of CONFIG.unpacked || []) self.pyodide.loadedPackages[name] = "site-startup";
  timings.packages = performance.now() - t0;
}

async function startApplication() {
  status("runtime", "Starting Python (Pyodide)");
  const options = {indexURL: absolute(PYODIDE_URL)};
  if (CONFIG.stdlib) options.stdLibURL = absolute(CONFIG.stdlib);
  self.pyodide = await loadPyodide(options);
  self.pyodide.globals.set("sendPatch", sendPatch);
  timings.runtime = performance.now() - t0;
  status("packages", "Loading NumPy, Panel and Bokeh");
  await loadPackages();
  const start = await started;
  if (start.embed) await loadLater();  // widgets are lessons: what the lessons need, now
  const app = start.embed ? EMBED_APP : CONFIG.app;
  status("modules", "Importing NumPy, Bokeh, Panel and pyplay");
  self.pyodide.runPython(CONFIG.boot);
  applyPatch = self.pyodide.globals.get("apply_patch");
  runLater = self.pyodide.globals.get("run_later");
  drawNext = self.pyodide.globals.get("draw_ahead");
  self.pyodide.globals.set("PYPLAY_APP", app);
  self.pyodide.runPython("import_app(PYPLAY_APP)");
  timings.modules = performance.now() - t0;
  status("app", start.embed ? "Building the widgets" : "Building the first lesson");
  self.pyodide.globals.set("PYPLAY_OPTIONS", JSON.stringify(
    start.embed ? {widgets: start.embed} : {...(CONFIG.appOptions || {}), ahead: start.ahead}));
  self.pyodide.globals.set("PYPLAY_DIST_URL", absolute(CONFIG.panelDist));
  const result = await self.pyodide.runPythonAsync(
    "await start_app(PYPLAY_APP, PYPLAY_DIST_URL, PYPLAY_OPTIONS)");
  const [docsJson, renderItems, rootIds] = result.toJs();
  result.destroy();
  timings.app = performance.now() - t0;
  self.postMessage({type: "render", docs_json: docsJson, render_items: renderItems,
                    root_ids: rootIds, timings: timings});
}

// One turn of the event loop: messages from the page (a click, typing) are handled first.
const nextTurn = () => new Promise((resolve) => setTimeout(resolve, 0));

// The packages and bytecode the lessons need beyond the first render (the playground's
// "Start here"), once: after the first render, or before building embedded widgets.
let laterLoaded = false;
async function loadLater() {
  if (laterLoaded) return;
  laterLoaded = true;
  const bytecode = CONFIG.bytecodeLater ? fetchBytes(absolute(CONFIG.bytecodeLater)) : null;
  if ((CONFIG.later || []).length) await self.pyodide.loadPackage(CONFIG.later, quiet);
  if (bytecode) await unpack(bytecode);
}

// After the first render: what the queued work needs, the work, then the other packages.
async function finishStart() {
  try {
    await loadLater();
  } finally {
    await release();  // what the page sent meanwhile, in order
  }
  timings.later = performance.now() - t0;
  await nextTurn();
  // Saved work first and at once (a reload's offer to restore it); then the other lessons,
  // each only when nothing was patched either way for QUIET_MS: a lesson's build holds the
  // worker for 0.5-2 s, and built one per turn beside a model the learner has just started
  // they halved its steps (the first falling loss 5-10 s later: web/measure.py first).
  for (let left = runLater(); left > 0; left = runLater()) await whenQuiet();
  timings.built = performance.now() - t0;
  if (CONFIG.deferred.length) await self.pyodide.loadPackage(CONFIG.deferred, quiet);
  timings.deferred = performance.now() - t0;
  if (aheadWanted) await drawAhead();
  timings.settled = performance.now() - t0;
  self.postMessage({type: "settled", timings: timings});
}

// The lessons built, each drawn into its hidden tab (web/site/boot.py draw_ahead), so that
// opening a tab only shows it. One lesson at a time: the next only when the page has applied
// the previous one and is idle (it answers "drawn" from requestIdleCallback) and no patch
// went either way for QUIET_MS (the learner clicking or typing, a model training: its live
// views send patches several times a second). A click thus waits behind one lesson at most.
const QUIET_MS = 1000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Resolves once no patch went either way for QUIET_MS, after one turn of the event loop at
// least (what the page sent meanwhile is handled first, and is a patch).
async function whenQuiet() {
  await nextTurn();
  for (let wait = QUIET_MS - (performance.now() - lastPatch); wait > 0;
       wait = QUIET_MS - (performance.now() - lastPatch)) {
    await sleep(wait);
  }
}

async function drawAhead() {
  for (;;) {
    await whenQuiet();
    if (!drawNext()) return;
    await new Promise((resolve) => {
      pageIdle = resolve;
      self.postMessage({type: "ahead"});
    });
  }
}

// Until what the lessons need has loaded (finishStart's loadLater), the page's patches and
// its address are held and then handled in the order they came: a click on a lesson's tab,
// a "Start here" button or an address naming a lesson would otherwise build that lesson
// without its packages (an ImportError the page never shows, a tab "Loading" for good).
let held = [];

self.onmessage = async (event) => {
  const msg = event.data;
  if (held !== null && (msg.type === "patch" || msg.type === "location")) {
    held.push(msg);
    return;
  }
  await handle(msg);
};

// The last line of an error (a Python traceback's is the exception), for the page.
function lastLine(err) {
  const lines = String(err).trim().split("\n");
  return lines[lines.length - 1];
}

function pyError(err) {
  self.postMessage({type: "pyerror", msg: lastLine(err), detail: String(err)});
}

async function release() {
  const waiting = held || [];
  held = null;
  for (const msg of waiting) await handle(msg);
}

async function handle(msg) {
  if (msg.type === "start") {
    resolveStart({embed: Array.isArray(msg.embed) ? msg.embed : null, ahead: msg.ahead !== false});
    aheadWanted = msg.ahead !== false;
  } else if (msg.type === "rendered") {
    await self.pyodide.runPythonAsync(`
from panel.io.state import state
from panel.io.pyodide import _link_docs_worker
_link_docs_worker(state.curdoc, sendPatch, setter="js")
# The page has rendered the document: tell Panel it is loaded. Until then Panel's hold()
# drops the events it holds instead of sending them, so a layout whose children change
# (a lesson built when its tab is first opened) would never update in the page.
state._on_load(state.curdoc)
`);
    finishStart().catch((err) => console.error("pyplay: finishing the start failed:", err));
  } else if (msg.type === "load") {  // the page's load: pace training (client.js watchLoad)
    try {
      if (pageLoad === null) {
        pageLoad = self.pyodide.pyimport("pyplay.ui.session").page_load;
      }
      pageLoad(Number(msg.share));
    } catch (err) {  // as for a patch: the page says so
      pyError(err);
    }
  } else if (msg.type === "drawn") {  // the page is idle after a lesson drawn ahead
    if (pageIdle) pageIdle();
    pageIdle = null;
  } else if (msg.type === "patch") {
    lastPatch = performance.now();
    try {
      applyPatch(msg.patch);  // synchronous: one patch at a time, each exactly once
    } catch (err) {  // a bug in a callback: tell the page instead of failing silently
      pyError(err);
    } finally {
      self.postMessage({type: "idle"});
    }
  } else if (msg.type === "location") {
    self.pyodide.globals.set("location", msg.location);
    try {
      await self.pyodide.runPythonAsync(`
from pyplay.ui.location import follow_address
follow_address(location)
`);
    } catch (err) {  // as for a patch: the page says so
      pyError(err);
    }
  } else if (msg.type === "run") {
    try {
      const value = await self.pyodide.runPythonAsync(msg.code);
      self.postMessage({type: "result", id: msg.id, value: String(value)});
    } catch (err) {
      self.postMessage({type: "result", id: msg.id, error: String(err)});
    }
  }
}

startApplication().catch((err) => {
  self.postMessage({type: "error", msg: lastLine(err)});
  console.error(err);
});
