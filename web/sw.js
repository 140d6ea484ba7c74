// Service worker: a second visit starts from the browser's cache instead of the network.
// On install it stores every file listed in pyplay-lock.json; afterwards the page is
// network-first (so a rebuilt site shows up) and every other asset cache-first. A rebuild
// changes CACHE, which replaces the old cache.
"use strict";
const CACHE = "__CACHE_VERSION__";

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    const lock = await (await fetch("./pyplay-lock.json", {cache: "no-store"})).json();
    const files = Object.keys(lock.files).filter((f) => !f.endsWith(".html"));
    await cache.addAll(files.map((f) => "./" + f));
    await self.skipWaiting();
  })());
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const key of await caches.keys()) {
      if (key !== CACHE) await caches.delete(key);
    }
    await self.clients.claim();
  })());
});

self.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== "GET" || url.origin !== self.location.origin) return;
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    if (event.request.mode === "navigate") {
      try {
        const fresh = await fetch(event.request);
        cache.put(event.request, fresh.clone());
        return fresh;
      } catch (err) {
        const stale = await cache.match(event.request);
        if (stale) return stale;
        throw err;
      }
    }
    const hit = await cache.match(event.request, {ignoreSearch: true});
    if (hit) return hit;
    const response = await fetch(event.request);
    if (response.ok) cache.put(event.request, response.clone());
    return response;
  })());
});
