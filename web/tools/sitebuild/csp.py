"""The Content-Security-Policy of the built site, declared once and written into its pages.

A static host (GitHub Pages, a course site, ``python build.py serve``) may send no headers of
the site's choosing, so the policy travels in each page as
``<meta http-equiv="Content-Security-Policy" content="...">``, the first element of its head
(the placeholder ``__CSP__`` in ``web/site/*.html``). It allows:

- scripts, styles, fonts, images, data and workers from the page's own origin only, so no
  request leaves it (the offline guarantee, enforced by the browser as well as tested);
- ``'wasm-unsafe-eval'``: Pyodide compiles WebAssembly (no JavaScript ``eval``, no inline
  script: the pages' scripts are files);
- ``blob:`` workers (a host page on another origin starts the Python worker from a blob; the
  baseline page does too) and ``blob:``/``data:`` images (a plot saved as PNG, the favicon);
- inline styles: BokehJS and Panel add ``<style>`` elements to their shadow roots at run time.

Nothing else: no plugins, no ``<base>`` elsewhere, no form posts. The CDN variant adds the
CDN origins it loads from (:func:`policy` with ``extra``).
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["PLACEHOLDER", "policy"]

PLACEHOLDER = "__CSP__"


def policy(extra: Iterable[str] = ()) -> str:
    """The policy, with the origins in ``extra`` (``"https://cdn.example.org"``) allowed too
    for scripts, styles, data and workers (the CDN variant); none for the offline site."""
    more = "".join(f" {origin}" for origin in extra)
    directives = {
        "default-src": f"'self'{more}",
        "script-src": f"'self' 'wasm-unsafe-eval'{more}",
        "worker-src": f"'self' blob:{more}",
        "connect-src": f"'self'{more}",
        "style-src": f"'self' 'unsafe-inline'{more}",
        "img-src": "'self' data: blob:",
        "font-src": f"'self' data:{more}",
        "object-src": "'none'",
        "base-uri": "'self'",
        "form-action": "'none'",
    }
    return "; ".join(f"{name} {value}" for name, value in directives.items())
