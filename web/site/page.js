// The playground page's own script (index.html): the loader's stages, the start of the
// Python worker through client.js, and the embed (?embed=) form. A file, not an inline
// script, so the site's Content-Security-Policy can forbid inline scripts.
(function () {
  "use strict";
  // index.html shows the whole playground, or with ?embed=<widget>&<settings> a single widget
  // (the iframe form of embedding; see pyplay/ui/embed.py and the README).
  const STAGES = ["runtime", "packages", "modules", "app", "draw"];
  const t0 = performance.now();
  const timings = (window.pyplayTimings = {stages: {}});
  const root = document.documentElement;
  const query = new URLSearchParams(window.location.search);
  const embedded = query.get("embed");
  let client = null;

  function embedRequest() {
    const settings = {};
    let height = null;
    for (const [key, value] of query) {
      if (key === "embed") continue;
      if (key === "height") height = value;
      else settings[key] = value;
    }
    return [{widget: embedded, settings: settings, height: height}];
  }

  // The loader: the stage under way, each finished stage's seconds, the seconds so far, and a
  // progress bar weighed by how long each stage took on this browser's last visit (or, on a
  // first visit, in the build's profile of the start: the worker sends those weights). Inside
  // a stage the bar moves with the time the stage is expected to take and stops short of its
  // end until the stage is done.
  const SAVED = "pyplay-stage-seconds";
  let weights = null;  // stage -> expected seconds (relative on a first visit)
  let current = -1;
  let stageStart = 0;
  let ticker = null;
  try {
    weights = JSON.parse(window.localStorage.getItem(SAVED) || "null");
  } catch (err) {
    weights = null;  // no storage (some private windows, blocked in an iframe): weigh evenly
  }

  function weight(stage) {
    return weights && weights[stage] > 0 ? weights[stage] : 1;
  }

  function progress() {
    const now = performance.now();
    const seconds = (now - t0) / 1000;
    document.getElementById("pyplay-elapsed").textContent = seconds.toFixed(1) + " s";
    if (current < 0) return;
    const total = STAGES.reduce((sum, s) => sum + weight(s), 0);
    let done = 0;
    let spent = 0;  // seconds the finished stages took, against their weights: the scale
    for (let k = 0; k < current; k++) {
      done += weight(STAGES[k]);
      spent += (timings.stages[STAGES[k + 1]] - timings.stages[STAGES[k]]) / 1000;
    }
    const scale = done > 0 ? spent / done : 1;
    const within = Math.min(0.9, (now - stageStart) / 1000 / (weight(STAGES[current]) * scale));
    const value = (done + within * weight(STAGES[current])) / total;
    const bar = document.getElementById("pyplay-progress");
    bar.value = Math.max(bar.value, Math.round(1000 * value));  // never backwards
  }

  function setStage(stage, text, stageWeights) {
    const k = STAGES.indexOf(stage);
    if (k < 0) return;
    if (stageWeights && !weights) weights = stageWeights;
    if (k <= current) {  // the stage under way (the page starts "runtime" before the worker)
      document.getElementById("pyplay-loader-msg").textContent = text || "";
      return;
    }
    const now = performance.now();
    timings.stages[stage] = now - t0;
    document.querySelectorAll("#pyplay-loader li").forEach((li, i) => {
      li.className = i < k ? "done" : i === k ? "active" : "";
      if (i === k - 1 || (i < k && !li.querySelector(".took").textContent)) {
        const from = timings.stages[STAGES[i]];
        const to = timings.stages[STAGES[i + 1]];
        if (from !== undefined && to !== undefined) {
          li.querySelector(".took").textContent = ((to - from) / 1000).toFixed(1) + " s";
        }
      }
    });
    current = k;
    stageStart = now;
    document.getElementById("pyplay-loader-msg").textContent = text || "";
    if (!ticker) ticker = setInterval(progress, 100);
    progress();
  }

  function rememberStages() {  // this visit's seconds per stage weigh the next visit's bar
    const seconds = {};
    STAGES.forEach((stage, k) => {
      const end = k + 1 < STAGES.length ? timings.stages[STAGES[k + 1]] : timings.ready;
      if (timings.stages[stage] !== undefined && end !== undefined) {
        seconds[stage] = (end - timings.stages[stage]) / 1000;
      }
    });
    try {
      window.localStorage.setItem(SAVED, JSON.stringify(seconds));
    } catch (err) {
      // no storage: the next visit weighs its bar with the build's profile again
    }
  }

  function showNotice(text) {  // text only: never parsed as HTML
    let box = document.getElementById("pyplay-notice");
    if (!box) {
      box = document.createElement("div");
      box.id = "pyplay-notice";
      box.setAttribute("role", "alert");
      box.style.cssText = "position:fixed;bottom:1em;right:1em;max-width:32em;padding:.8em 1em;" +
        "background:#fdecea;color:#611a15;border:1px solid #f5c6cb;border-radius:4px;z-index:10000";
      box.addEventListener("click", () => box.remove());
      document.body.appendChild(box);
    }
    box.textContent = text;
  }

  function showError(text) {
    if (ticker) clearInterval(ticker);
    const msg = document.getElementById("pyplay-loader-msg");
    if (msg) {
      msg.textContent = "The playground could not start: " + text;
      msg.className = "error";
      msg.setAttribute("role", "alert");
    }
    root.dataset.pyplayError = "true";
  }

  function rendered() {
    if (ticker) clearInterval(ticker);
    document.getElementById("pyplay-loader").remove();
    window.pyplay.document = client.document;
    if (!embedded) {  // the address carries the playground's settings (pyplay/ui/location.py)
      client.send({type: "location", location: JSON.stringify(window.location)});
    }
    timings.ready = performance.now() - t0;
    timings.worker = client.timings.worker;
    rememberStages();
    root.dataset.pyplayReady = "true";
  }

  function startClient() {
    client = new PyplayClient({
      base: "./",
      embed: embedded ? embedRequest() : null,
      ahead: window.pyplayAhead !== false,  // a script before this one may turn it off
      mount: (rootIds) => rootIds.map(() => document.getElementById("pyplay-root")),
      onStage: setStage,
      onRendered: rendered,
      onError: showError,
      onNotice: showNotice,
      onSettled: () => {
        timings.settled = performance.now() - t0;
        timings.worker = client.timings.worker;
        root.dataset.pyplaySettled = "true";
      },
    });
  }

  // Panel's Location pushes a new history entry for every change of the address, so Back
  // would step through every click and slider move. The playground keeps one entry and
  // replaces it, as map and editor apps do: the address is always the current setup, and
  // Back leaves the page.
  if (!embedded) {
    window.history.pushState = function (state, title, url) {
      window.history.replaceState(state, title, url);
    };
  }

  // For the page's own scripts and tests: run Python in the worker, get str(result) back.
  window.pyplay = {runPython: (code) => client.runPython(code)};
  if (embedded) root.classList.add("pyplay-embedded");

  // The service worker caches every file this visit fetches (the Python worker's too), so a
  // second visit starts from the cache. It must control the page before the Python worker
  // starts, so that the worker's requests go through it: on a first visit that takes a
  // moment (never more than 3 s; without service workers, start right away).
  async function underServiceWorker() {
    if (!("serviceWorker" in navigator) || location.protocol === "file:") return;
    try {
      await navigator.serviceWorker.register("./sw.js");
      if (navigator.serviceWorker.controller) return;
      await Promise.race([
        new Promise((ok) => navigator.serviceWorker.addEventListener("controllerchange", ok,
                                                                     {once: true})),
        new Promise((ok) => setTimeout(ok, 3000)),
      ]);
    } catch (err) {
      console.warn("service worker not available:", err);
    }
  }
  setStage("runtime", "Starting Python (Pyodide)");
  underServiceWorker().then(() => {
    timings.serviceWorker = performance.now() - t0;  // the wait for its control (first visit)
    startClient();
  });
})();
