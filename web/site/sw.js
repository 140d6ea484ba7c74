// Service worker: a second visit starts from the browser's cache instead of the network.
// It takes control at once (the page waits for that before starting Python), stores every
// file the site fetches from its own origin, and serves them cache-first; the page itself is
// network-first, so a rebuilt site shows up. A rebuild changes CACHE, which replaces the old
// cache.
"use strict";
const CACHE = "__CACHE_VERSION__";

self.addEventListener("install", (event) => {
  event.waitUntil(self.skipWaiting());
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
