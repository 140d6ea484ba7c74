// What the page tells those who cannot see it.
//
// - A screen reader: the playground draws its loss curves and look-inside views on canvases,
//   which a screen reader cannot read. The shown lesson's status line says what the loss plot
//   shows at its newest point ("Step 120: loss 0.0432, 25.0 steps/s"); this copies it, with the
//   lesson's name, into a polite live region (role="status", visually hidden) at most every
//   ANNOUNCE_MS, and only when it changed, so a screen reader reads the training's progress
//   without being flooded by every slice.
// - A parent page, when the page is an iframe (an ?embed= widget): its height, as a message
//   {pyplay: "height", height: <px>} posted whenever it changes, so the course page can size
//   the iframe without scrollbars (embed.js does it for every pyplay iframe on its page; the
//   README shows the two lines a page without embed.js needs).
"use strict";
(function () {
  const ANNOUNCE_MS = 5000;
  const STATUS = /(^|\s)pyplay-([a-z0-9]+-)?status(\s|$)|(^|\s)pyplay-widget-status(\s|$)/;

  // the first visible status line of the page, through the shadow roots Panel renders into
  function shownStatus(root) {
    for (const el of root.querySelectorAll("*")) {
      if (STATUS.test(el.className || "") && el.checkVisibility && el.checkVisibility()) {
        const pre = (el.shadowRoot || el).querySelector("pre");
        const text = pre ? pre.textContent.trim() : "";
        if (text) return text;
      }
      if (el.shadowRoot) {
        const found = shownStatus(el.shadowRoot);
        if (found) return found;
      }
    }
    return "";
  }

  function shownLesson() {
    const walk = (root) => {
      for (const el of root.querySelectorAll('[role="tab"][aria-selected="true"]')) {
        return el.textContent.trim();
      }
      for (const el of root.querySelectorAll("*")) {
        if (el.shadowRoot) {
          const found = walk(el.shadowRoot);
          if (found) return found;
        }
      }
      return "";
    };
    return walk(document);
  }

  function announce() {
    const region = document.createElement("div");
    region.id = "pyplay-announce";
    region.setAttribute("role", "status");
    region.setAttribute("aria-live", "polite");
    region.className = "pyplay-visually-hidden";
    (document.querySelector("main") || document.body).appendChild(region);
    let last = "";
    setInterval(() => {
      if (document.hidden) return;
      const status = shownStatus(document);
      if (!status || status === last) return;
      last = status;
      const lesson = shownLesson();
      region.textContent = (lesson ? lesson + ", loss plot: " : "Loss plot: ") + status;
    }, ANNOUNCE_MS);
  }

  function tellParent() {
    if (window.parent === window) return;
    let sent = 0;
    const send = () => {
      const height = Math.ceil(document.documentElement.scrollHeight);
      if (height !== sent) {
        sent = height;
        window.parent.postMessage({pyplay: "height", height: height}, "*");  // a height only
      }
    };
    new ResizeObserver(send).observe(document.documentElement);
    send();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", () => { announce(); tellParent(); });
  } else {
    announce();
    tellParent();
  }
})();
