// pyplay widgets in any web page. On the host page:
//
//   <div data-pyplay-widget="attention" data-task="reverse"></div>
//   <script src="https://<where the site is>/embed.js" defer></script>
//
// Every element with data-pyplay-widget on the page becomes that widget (names and settings:
// pyplay/ui/embed.py; data-height="480" fixes its height, otherwise it is as tall as its
// content; its width follows the element's). One Python runtime serves all of them, however
// many times this script is included. It loads BokehJS, Panel's JS and the Python worker from
// the site this script comes from, which must allow cross-origin requests (GitHub Pages and
// `python build.py serve` do) when the host page is elsewhere.
"use strict";
(function () {
  if (window.pyplayEmbed) return;  // the snippet twice on a page: one runtime
  const script = document.currentScript;
  const base = new URL(".", script ? script.src : window.location.href).href;
  const SCRIPTS = ["./bokeh/bokeh.min.js", "./bokeh/bokeh-widgets.min.js",
                   "./bokeh/bokeh-tables.min.js", "./panel/panel.min.js", "./client.js"];
  const state = (window.pyplayEmbed = {base: base, runtimes: 0, ready: false, client: null});

  // an ?embed= iframe of the site says its height (announce.js): size that iframe to it, so
  // it shows its whole widget without a scrollbar
  window.addEventListener("message", (event) => {
    const data = event.data;
    if (!data || data.pyplay !== "height" || !(data.height > 0)) return;
    for (const frame of document.querySelectorAll("iframe")) {
      if (frame.contentWindow === event.source) frame.style.height = Math.ceil(data.height) + "px";
    }
  });

  function loadScript(src) {
    return new Promise((resolve, reject) => {
      const el = document.createElement("script");
      el.src = new URL(src, base).href;
      el.onload = resolve;
      el.onerror = () => reject(new Error("could not load " + el.src));
      document.head.appendChild(el);
    });
  }

  // data-task="reverse" -> {task: "reverse"}; data-hidden-size="32" -> {hidden_size: "32"}
  function request(el) {
    const settings = {};
    let height = null;
    for (const [key, value] of Object.entries(el.dataset)) {
      if (key === "pyplayWidget") continue;
      if (key === "height") { height = value; continue; }
      settings[key.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase())] = value;
    }
    return {widget: el.dataset.pyplayWidget, settings: settings, height: height};
  }

  function say(elements, text, failed) {  // text only, never HTML
    for (const el of elements) {
      let box = el.querySelector(":scope > .pyplay-embed-status");
      if (!box) {
        box = document.createElement("p");
        box.className = "pyplay-embed-status";
        box.setAttribute("role", failed ? "alert" : "status");
        box.style.cssText = "font-family:system-ui,sans-serif;color:" +
          (failed ? "#b42318" : "#52606d");
        el.appendChild(box);
      }
      box.textContent = text;
    }
  }

  async function start() {
    const elements = [...document.querySelectorAll("[data-pyplay-widget]")];
    if (!elements.length) return;
    for (const el of elements) {
      if (el.dataset.height) el.style.minHeight = el.dataset.height + "px";
      if (!el.style.width) el.style.width = "100%";
      // a lesson stacks by this element's width, not the window's (pyplay.ui.style.CONTAINER)
      el.style.container = "pyplay / inline-size";
    }
    say(elements, "pyplay: starting Python in your browser…", false);
    try {
      for (const src of SCRIPTS) await loadScript(src);  // in order: Panel needs Bokeh
    } catch (err) {
      say(elements, "pyplay could not start: " + err.message, true);
      return;
    }
    state.runtimes += 1;
    let mounted = false;
    state.client = new PyplayClient({
      base: base,
      embed: elements.map(request),
      mount: (rootIds) => {
        mounted = true;
        for (const el of elements) el.querySelector(":scope > .pyplay-embed-status")?.remove();
        return rootIds.map((_, k) => elements[k]);
      },
      onStage: (stage, text) => {  // the widgets show themselves once mounted: no stage line
        if (!mounted) say(elements, "pyplay: " + (text || stage) + "…", false);
      },
      onRendered: () => {
        for (const el of elements) el.querySelector(":scope > .pyplay-embed-status")?.remove();
        state.ready = true;
        document.documentElement.dataset.pyplayEmbedReady = "true";
      },
      onError: (text) => say(elements, "pyplay could not start: " + text, true),
      onNotice: (text) => say(elements, "pyplay: " + text, true),
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start, {once: true});
  } else {
    start();
  }
})();
