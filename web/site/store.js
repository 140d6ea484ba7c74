// Saved work in the browser: snapshots of trained models in IndexedDB (database "pyplay").
// Loaded by worker.js with importScripts (IndexedDB works in workers); Python reaches it as
// js.pyplayStore (pyplay/ui/storage.py, IndexedDBStore). Every function returns a Promise.
//
// Two object stores: "snapshots" holds the metadata (a JSON-able object with an "id"), "files"
// the .npz bytes under the same id, so listing never reads the models. Metadata crosses to
// Python as JSON text. Failures (no IndexedDB in private mode, quota exceeded, a database
// blocked by an older tab) reject with an Error whose message says what happened.
"use strict";
self.pyplayStore = (() => {
  const NAME = "pyplay";
  const VERSION = 1;
  let opening = null;

  function open() {
    if (opening === null) {
      opening = new Promise((resolve, reject) => {
        if (typeof indexedDB === "undefined" || indexedDB === null) {
          reject(new Error("this browser offers no IndexedDB here (private mode?)"));
          return;
        }
        let request;
        try {
          request = indexedDB.open(NAME, VERSION);
        } catch (err) {
          reject(err);
          return;
        }
        request.onupgradeneeded = () => {
          const db = request.result;
          if (!db.objectStoreNames.contains("snapshots")) {
            db.createObjectStore("snapshots", {keyPath: "id"});
          }
          if (!db.objectStoreNames.contains("files")) db.createObjectStore("files");
        };
        request.onsuccess = () => {
          const db = request.result;
          db.onversionchange = () => db.close();  // a newer page needs the database
          resolve(db);
        };
        request.onerror = () => reject(request.error || new Error("the database did not open"));
        request.onblocked = () => reject(new Error("the database is in use by another tab"));
      });
      opening.catch(() => { opening = null; });  // try again next time
    }
    return opening;
  }

  function finished(tx) {
    return new Promise((resolve, reject) => {
      tx.oncomplete = () => resolve();
      tx.onerror = () => reject(tx.error || new Error("the transaction failed"));
      tx.onabort = () => reject(tx.error || new Error("the transaction was aborted"));
    });
  }

  function value(request) {
    return new Promise((resolve, reject) => {
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error || new Error("the request failed"));
    });
  }

  async function put(metaJson, bytes) {
    const meta = JSON.parse(metaJson);
    const db = await open();
    const tx = db.transaction(["snapshots", "files"], "readwrite");
    tx.objectStore("snapshots").put(meta);
    tx.objectStore("files").put(new Uint8Array(bytes), meta.id);
    await finished(tx);
    return true;
  }

  async function list() {
    const db = await open();
    const tx = db.transaction("snapshots", "readonly");
    const rows = await value(tx.objectStore("snapshots").getAll());
    return JSON.stringify(rows);
  }

  async function get(id) {
    const db = await open();
    const tx = db.transaction("files", "readonly");
    const bytes = await value(tx.objectStore("files").get(String(id)));
    return bytes === undefined ? null : new Uint8Array(bytes);
  }

  async function rename(id, name) {
    const db = await open();
    const tx = db.transaction("snapshots", "readwrite");
    const store = tx.objectStore("snapshots");
    const meta = await value(store.get(String(id)));
    if (meta === undefined) return false;
    meta.name = String(name);
    meta.named = true;
    store.put(meta);
    await finished(tx);
    return true;
  }

  async function remove(id) {
    const db = await open();
    const tx = db.transaction(["snapshots", "files"], "readwrite");
    const meta = await value(tx.objectStore("snapshots").get(String(id)));
    tx.objectStore("snapshots").delete(String(id));
    tx.objectStore("files").delete(String(id));
    await finished(tx);
    return meta !== undefined;
  }

  return {put, list, get, rename, remove};
})();
