// The playground page's own script (index.html): the loader's stages, the start of the
// Python worker through client.js, and the embed (?embed=) form. A file, not an inline
// script, so the site's Content-Security-Policy can forbid inline scripts.
(function () {
  "use strict";
  // index.html shows the whole playground, or with ?embed=<widget>&<settings> a single widget
  // (the iframe form of embedding; see pyplay/ui/embed.py and the README).
  const STAGES = ["runtime", "packages", "pyplay", "app"];
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

  function setStage(stage, text) {
    const k = STAGES.indexOf(stage);
    timings.stages[stage] = performance.now() - t0;
    document.querySelectorAll("#pyplay-loader li").forEach((li, i) => {
      li.className = i < k ? "done" : i === k ? "active" : "";
    });
    document.getElementById("pyplay-progress").value = k;
    document.getElementById("pyplay-loader-msg").textContent = text || "";
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
    const msg = document.getElementById("pyplay-loader-msg");
    if (msg) {
      msg.textContent = "The playground could not start: " + text;
      msg.className = "error";
      msg.setAttribute("role", "alert");
    }
    root.dataset.pyplayError = "true";
  }

  function rendered() {
    document.getElementById("pyplay-loader").remove();
    window.pyplay.document = client.document;
    if (!embedded) {  // the address carries the playground's settings (pyplay/ui/location.py)
      client.send({type: "location", location: JSON.stringify(window.location)});
    }
    timings.ready = performance.now() - t0;
    timings.worker = client.timings.worker;
    root.dataset.pyplayReady = "true";
  }

  function startClient() {
    client = new PyplayClient({
      base: "./",
      embed: embedded ? embedRequest() : null,
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
  underServiceWorker().then(startClient);
})();
