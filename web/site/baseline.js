// Measures how long bare Pyodide + NumPy take to start here, in a Web Worker as the
// playground does: the yardstick for the playground's own start-up figures.
(function () {
  "use strict";
  const t0 = performance.now();
  const py = new URL("__PYODIDE_URL__", location.href).href;
  const src = `importScripts("${py}pyodide.js");
    (async () => {
      const pyodide = await loadPyodide({indexURL: "${py}"});
      await pyodide.loadPackage(["numpy"], {messageCallback: () => {}});
      await pyodide.runPythonAsync("import numpy");
      postMessage("ready");
    })();`;
  const worker = new Worker(URL.createObjectURL(new Blob([src], {type: "text/javascript"})));
  worker.onmessage = () => {
    const ms = performance.now() - t0;
    window.baselineMs = ms;
    document.getElementById("result").textContent =
      "Pyodide + NumPy ready in " + (ms / 1000).toFixed(2) + " s";
    document.documentElement.dataset.baselineReady = "true";
  };
})();
