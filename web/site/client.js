// The page side of pyplay, shared by the playground (index.html, also in its ?embed= form) and
// by widgets embedded in other sites' pages (embed.js): starts the Python worker, renders the
// Bokeh document it sends into the page's elements (one element per root), and relays changes
// both ways, in order. Text from Python is only ever shown as text.
"use strict";
(function () {
  if (window.PyplayClient) return;

  // Bokeh draws every heatmap (its image glyph) through a small canvas of its own that it
  // reads back with getImageData at each update; without telling the browser, Chromium warns
  // in the console once per heatmap ("Multiple readback operations ..."). Those canvases are
  // the ones without a class (Bokeh's drawing layers are "bk-layer"): ask for readback there.
  const getContext = HTMLCanvasElement.prototype.getContext;
  HTMLCanvasElement.prototype.getContext = function (type, options) {
    if (type === "2d" && !this.className && !this.isConnected) {
      options = Object.assign({willReadFrequently: true}, options || {});
    }
    return getContext.call(this, type, options);
  };

  // Drawing spread over frames. BokehJS paints each plot in an animation-frame callback of
  // its own, so a live redraw (a lesson's six gate heatmaps and its loss curve) painted every
  // plot in one frame: one task of 80-120 ms on these machines, 200-260 ms with a second
  // browser busy on the same cores, in which a click waits. Here the frame's callbacks run in
  // order while they have taken less than FRAME_BUDGET_MS (the first always runs); the rest
  // run in the next frame, ahead of callbacks asked for meanwhile. Nothing is dropped or
  // reordered; a plot is painted a frame or two later.
  const FRAME_BUDGET_MS = 16;
  const nativeFrame = window.requestAnimationFrame.bind(window);
  let frameQueue = [];  // [id, callback], in the order asked
  let frameIds = 0;
  let frameAsked = false;
  function runFrame(timestamp) {
    frameAsked = false;
    const start = performance.now();
    const due = frameQueue;
    frameQueue = [];
    let k = 0;
    for (; k < due.length && (k === 0 || performance.now() - start < FRAME_BUDGET_MS); k++) {
      try {
        due[k][1](timestamp);
      } catch (err) {  // as the browser does with a callback's error: reported, the rest run
        setTimeout(() => { throw err; });
      }
    }
    frameQueue = due.slice(k).concat(frameQueue);
    if (frameQueue.length) askFrame();
  }
  function askFrame() {
    if (!frameAsked) {
      frameAsked = true;
      nativeFrame(runFrame);
    }
  }
  window.requestAnimationFrame = function (callback) {
    frameQueue.push([++frameIds, callback]);
    askFrame();
    return frameIds;
  };
  window.cancelAnimationFrame = function (id) {
    frameQueue = frameQueue.filter((entry) => entry[0] !== id);
  };

  // Bokeh lays out the whole document again whenever any part changes (a lesson drawn, a
  // plot resized), the tabs not shown included: each lesson opened made opening the next one
  // slower (2.8 s the first, 5.7 s after eight others). Panel's tabs here lay out the tab
  // shown only (its layoutable_views), and the tab shown next when it is shown. The tabs not
  // shown are out of the page's layout too (display: none, pyplay/ui/style.py TABS_CSS): a
  // tab laid out in a window since resized is measured afresh when it is shown.
  function layOutShownTabOnly() {
    const Tabs = window.Bokeh && Bokeh.Models.get("panel.models.tabs.Tabs");
    const View = Tabs && Tabs.prototype.default_view;
    if (!View || View.prototype.pyplayShownOnly) return;
    let Layout = View;  // Bokeh's LayoutDOMView, which the layout passes walk
    while (Layout && Layout.__name__ !== "LayoutDOMView") Layout = Object.getPrototypeOf(Layout);
    if (!Layout) return;  // another Bokeh: leave its tabs alone
    Object.defineProperty(View.prototype, "layoutable_views", {
      get() {
        const shown = this.child_views[this.model.active];
        return shown instanceof Layout ? [shown] : [];
      },
    });
    const updateActive = View.prototype.update_active;
    View.prototype.update_active = function () {
      updateActive.call(this);
      this.invalidate_layout();
    };
    View.prototype.pyplayShownOnly = true;
  }

  // A tab change from Python that Python made before it handled a tab the learner chose in
  // the meantime (the page address's lesson, shown while the learner clicks "Saved work" at
  // start) arrives after that click: applied, the page would show the address's tab while
  // Python has the one clicked. The learner's choice stands: such a change is left out.
  function isTabChange(event) {
    return event.attr === "active" && event.model != null &&
      String(event.model.type || "").endsWith("Tabs");
  }

  function withoutOvertakenTabs(patch, chosen) {
    if (!chosen.size || !patch || !Array.isArray(patch.events)) return patch;
    const events = patch.events.filter((e) => !(e.kind === "ModelChanged" &&
      e.attr === "active" && e.model != null && chosen.has(e.model.id)));
    return events.length === patch.events.length ? patch : Object.assign({}, patch, {events});
  }

  // A worker from the site's own origin, or (host page on another origin) from a blob that
  // tells worker.js where the site is and imports it: browsers refuse cross-origin worker URLs.
  function makeWorker(base, sameOrigin) {
    const url = new URL("worker.js", base).href;
    if (sameOrigin) return new Worker(url);
    const code = `self.PYPLAY_BASE = ${JSON.stringify(base)};\nimportScripts(${JSON.stringify(url)});\n`;
    return new Worker(URL.createObjectURL(new Blob([code], {type: "text/javascript"})));
  }

  // options: {base: the site's address (ending "/"), embed: null or [widget requests],
  //   ahead: false to build each lesson only when its tab opens (web/site/worker.js),
  //   mount(rootIds) -> [element per root], onStage(stage, text, weights), onRendered(),
  //   onError(text), onNotice(text), onSettled()}
  function PyplayClient(options) {
    const base = new URL(options.base || "./", window.location.href).href;
    const worker = makeWorker(base, new URL(base).origin === window.location.origin);
    const pending = new Map();
    let nextRun = 0;
    let patching = 0;
    let busy = false;
    let queue = [];
    let sent = [];  // the changes of the patch Python is handling (until it says "idle")
    const client = {worker: worker, document: null, timings: {}};
    const t0 = performance.now();

    function sendChange(event) {
      if ((event.setter_id != null && event.setter_id === "py") || patching > 0) return;
      // An automatic range that the page fits to the data as it draws: Python never reads it
      // back, and sending it would hold a click queued behind it for another training slice.
      if (event.model && event.model.type === "DataRange1d" &&
          (event.attr === "start" || event.attr === "end")) return;
      if (busy) {  // queue everything, in order: a click must not overtake typing
        if (event.model && event.attr) {  // a newer value replaces one not yet sent...
          let barrier = -1;  // ...unless a click (or other message) came in between
          queue.forEach((e, k) => { if (!(e.model && e.attr)) barrier = k; });
          queue = queue.filter((e, k) =>
            k <= barrier || !(e.model === event.model && e.attr === event.attr));
        }
        queue.push(event);
        return;
      }
      busy = true;
      sent = [event];
      worker.postMessage({type: "patch", patch: client.document.create_json_patch([event])});
    }

    // The page's load, for pacing training (pyplay.ui.session.page_load): once a second, the
    // share of that second the main thread was held up, measured as how late a 100 ms timer
    // fired (every browser has timers; long-task entries are Chromium's only). A hidden page
    // reports nothing: its timers are throttled, and it draws nothing.
    function watchLoad() {
      const PERIOD = 100, WINDOW = 1000;
      let last = performance.now(), since = last, late = 0;
      setInterval(() => {
        const now = performance.now();
        late += Math.max(0, now - last - PERIOD);
        last = now;
        if (now - since < WINDOW) return;
        if (!document.hidden) {
          worker.postMessage({type: "load", share: Math.min(1, late / (now - since))});
        }
        late = 0;
        since = now;
      }, PERIOD);
    }

    async function render(msg) {
      const docsJson = JSON.parse(msg.docs_json);
      const renderItems = JSON.parse(msg.render_items);
      const rootIds = JSON.parse(msg.root_ids);
      // The document's roots: the app's (in the order Python made them), then any Panel adds
      // (e.g. the page location); mount() places the first, the others go in a hidden box.
      const docRoots = Object.values(docsJson)[0].roots || [];
      const isOurs = (id) => docRoots.some((r) => r.id === id &&
        JSON.stringify((r.attributes || {}).css_classes || []).includes("pyplay-"));
      const ours = rootIds.filter(isOurs);
      const placed = options.mount(ours.length ? ours : rootIds);
      let hidden = null;
      const elements = rootIds.map((id) => {
        const k = (ours.length ? ours : rootIds).indexOf(id);
        if (k >= 0 && placed[k]) return placed[k];
        if (!hidden) {
          hidden = document.createElement("div");
          hidden.hidden = true;
          document.body.appendChild(hidden);
        }
        return hidden;
      });
      const roots = {};
      const tag = Math.random().toString(36).slice(2, 8);
      rootIds.forEach((id, k) => {
        const el = document.createElement("div");
        el.className = "pyplay-root";
        el.id = `pyplay-root-${tag}-${k}`;
        elements[k].appendChild(el);
        roots[id] = el.id;  // Bokeh looks the element up by id
      });
      renderItems[0].roots = roots;
      renderItems[0].root_ids = rootIds;
      if (options.onStage) options.onStage("draw", "Drawing the page");
      layOutShownTabOnly();
      const [views] = await Bokeh.embed.embed_items(docsJson, renderItems);
      client.document = [...views.roots.values()][0].model.document;
      client.document.on_change(sendChange, false);
      worker.postMessage({type: "rendered"});
      watchLoad();
      client.timings.ready = performance.now() - t0;
      client.timings.worker = msg.timings;
      if (options.onRendered) options.onRendered();
    }

    worker.onmessage = async (event) => {
      const msg = event.data;
      if (msg.type === "idle") {
        if (queue.length) {
          // A tab the learner chose goes alone, ahead of what followed it: a tab change that
          // Python makes for a later click (an "Open ..." button) must not be taken for one
          // that the choice overtook (withoutOvertakenTabs) and left out.
          const tab = queue.findIndex(isTabChange);
          const batch = tab >= 0 && tab < queue.length - 1 ? queue.slice(0, tab + 1) : queue;
          const patch = client.document.create_json_patch(batch);
          sent = batch;
          queue = queue.slice(batch.length);
          worker.postMessage({type: "patch", patch: patch});
        } else {
          sent = [];
          busy = false;
        }
      } else if (msg.type === "pyerror") {
        console.error("pyplay: a change failed in Python:", msg.detail);
        if (options.onNotice) {
          options.onNotice("Something went wrong in Python (" + msg.msg + "). What you " +
                           "trained and typed is kept; please report this.");
        }
      } else if (msg.type === "status") {
        client.timings[msg.stage] = performance.now() - t0;
        if (options.onStage) options.onStage(msg.stage, msg.msg, msg.weights);
      } else if (msg.type === "render") {
        try {
          await render(msg);
        } catch (err) {
          if (options.onError) options.onError(String(err));
          throw err;
        }
      } else if (msg.type === "patch") {
        try {
          patching += 1;
          const chosen = new Set(sent.concat(queue).filter(isTabChange).map((e) => e.model.id));
          client.document.apply_json_patch(withoutOvertakenTabs(msg.patch, chosen), msg.buffers);
        } catch (err) {  // said, not an unhandled rejection of this handler that no one sees
          console.error("pyplay: a change from Python could not be drawn:", err);
          if (options.onNotice) {
            options.onNotice("Part of the page could not be redrawn (" + String(err) + "). " +
                             "What you trained and typed is kept; please report this.");
          }
        } finally {
          patching -= 1;
        }
      } else if (msg.type === "ahead") {  // a lesson drawn into its hidden tab: say when idle
        const whenIdle = window.requestIdleCallback || ((f) => setTimeout(f, 100));
        whenIdle(() => worker.postMessage({type: "drawn"}), {timeout: 10000});
      } else if (msg.type === "result") {
        const p = pending.get(msg.id);
        pending.delete(msg.id);
        if (p) (msg.error ? p.reject(new Error(msg.error)) : p.resolve(msg.value));
      } else if (msg.type === "settled") {  // the packages the first render did not need
        client.timings.settled = performance.now() - t0;
        client.timings.worker = msg.timings;
        if (options.onSettled) options.onSettled();
      } else if (msg.type === "error") {
        if (options.onError) options.onError(msg.msg);
      }
    };

    // Run Python in the worker and get str(result) back (for the page's scripts and tests).
    client.runPython = function (code) {
      const id = ++nextRun;
      return new Promise((resolve, reject) => {
        pending.set(id, {resolve, reject});
        worker.postMessage({type: "run", id: id, code: String(code)});
      });
    };
    client.send = (msg) => worker.postMessage(msg);

    worker.postMessage({type: "start", embed: options.embed || null, ahead: options.ahead !== false});
    return client;
  }

  window.PyplayClient = PyplayClient;
})();
