"""Named rewrites of the served BokehJS that give its widgets what a screen reader and a keyboard
need (WCAG 2.1 AA; checked by axe-core in ``tests/browser/test_accessibility.py``).

BokehJS 3.7 draws these without an accessible name or role:

- **Tabs** are plain ``div``s: no ``tablist`` / ``tab`` roles, no ``aria-selected``, every tab a
  stop of the Tab key and no arrow keys. After the rewrite the header is a ``tablist``, each tab
  a ``tab`` with ``aria-selected``; only the shown tab is in the Tab order (a "roving
  tabindex"), and on a tab Left / Right move to the previous / next tab, Home / End to the
  first / last, Enter / Space to the tab under the focus (the WAI-ARIA tabs pattern with
  automatic activation).
- **Sliders**: noUiSlider's handle has ``role="slider"`` and its value but no name; it gets the
  slider's title as ``aria-label``.
- **Checkboxes**: the label is a sibling ``span``, not a ``label`` wrapped around the input; the
  input gets the label's text as ``aria-label``.
- **Number inputs' spin buttons** are empty ``button``s: named "Increase" / "Decrease" and left
  out of the Tab order (the input itself takes the arrow keys).
- **File inputs** carry no title in Panel: named "Choose a <accepted types> file".

Each is a :class:`~sitebuild.patches.Patch` of package ``bokehjs`` (a file of ``bokeh/``) or
``paneljs`` (Panel's tabs view, ``panel/panel.min.js``, which draws the shown tab itself): one
exact piece of text replaced, or the build stops (:func:`~sitebuild.patches.apply`).
"""

from __future__ import annotations

from .patches import Patch

__all__ = ["A11Y_PATCHES"]

# the keys on a focused tab (WAI-ARIA Authoring Practices, tabs with automatic activation)
_TAB_KEYS = (
    "_pyplay_tab_key(e,s){const n=this.header_els.length;let k=null;"
    '"ArrowRight"==e.key?k=(s+1)%n:"ArrowLeft"==e.key?k=(s+n-1)%n:'
    '"Home"==e.key?k=0:"End"==e.key?k=n-1:"Enter"!=e.key&&" "!=e.key||(k=s);'
    "null!=k&&(e.preventDefault(),this.change_active(k),this.header_els[k].focus())}"
)

A11Y_PATCHES: tuple[Patch, ...] = (
    Patch(
        "bokehjs-tablist",
        "bokehjs",
        "bokeh.min.js",
        "this.header_el=(0,d.div)({class:m.header})",
        'this.header_el=(0,d.div)({class:m.header,role:"tablist"})',
        "the tabs' header was a plain div: a screen reader did not announce a set of tabs",
    ),
    Patch(
        "bokehjs-tab-role",
        "bokehjs",
        "bokeh.min.js",
        "const i=(0,d.div)({class:[m.tab,s==e?m.active:null],tabIndex:0},t.title);",
        "const i=(0,d.div)({class:[m.tab,s==e?m.active:null],tabIndex:s==e?0:-1,"
        'role:"tab","aria-selected":s==e?"true":"false"},t.title);'
        'i.addEventListener("keydown",(e=>this._pyplay_tab_key(e,s)));',
        "a tab was a plain div, every tab a Tab stop, and the arrow keys did nothing",
    ),
    Patch(  # the shown tab: Panel's tabs view (what the page uses) draws it, not Bokeh's
        "paneljs-tab-selected",
        "paneljs",
        "panel.min.js",
        "update_active(){const e=this.model.active,{header_els:t}=this;for(const e of t)"
        "e.classList.remove(a.active);e in t&&t[e].classList.add(a.active);",
        "update_active(){const e=this.model.active,{header_els:t}=this;for(const h of t)"
        'h.classList.remove(a.active),h.setAttribute("aria-selected","false"),h.tabIndex=-1;'
        'e in t&&(t[e].classList.add(a.active),t[e].setAttribute("aria-selected","true"),'
        "t[e].tabIndex=0);",
        "Panel's tabs marked the tab shown by a CSS class only",
    ),
    Patch(
        "bokehjs-tab-keys",
        "bokehjs",
        "bokeh.min.js",
        "change_active(e){e!=this.model.active&&(this.model.active=e)}",
        _TAB_KEYS + "change_active(e){e!=this.model.active&&(this.model.active=e)}",
        "the arrow keys did not move between tabs",
    ),
    Patch(
        "bokehjs-slider-name",
        "bokehjs",
        "bokeh-widgets.min.js",
        "orientation:this.model.orientation,direction:this.model.direction})",
        "orientation:this.model.orientation,direction:this.model.direction}),"
        'this.slider_el.querySelectorAll(".noUi-handle").forEach((h=>h.setAttribute('
        '"aria-label",this.model.title??"")))',
        "a slider's handle (role slider) had no accessible name",
    ),
    Patch(
        "bokehjs-checkbox-name",
        "bokehjs",
        "bokeh-widgets.min.js",
        'this.checkbox_el=(0,a.input)({type:"checkbox"})',
        'this.checkbox_el=(0,a.input)({type:"checkbox","aria-label":this.model.label})',
        "a checkbox's label was a sibling span, not a label: the input had no name",
    ),
    Patch(
        "bokehjs-spin-names",
        "bokehjs",
        "bokeh-widgets.min.js",
        'this.btn_up_el=(0,_.button)({class:"bk-spin-btn bk-spin-btn-up"}),'
        'this.btn_down_el=(0,_.button)({class:"bk-spin-btn bk-spin-btn-down"})',
        'this.btn_up_el=(0,_.button)({class:"bk-spin-btn bk-spin-btn-up","aria-label":'
        '"Increase",tabIndex:-1}),this.btn_down_el=(0,_.button)({class:"bk-spin-btn '
        'bk-spin-btn-down","aria-label":"Decrease",tabIndex:-1})',
        "a number input's spin buttons were empty buttons with no name",
    ),
    Patch(
        "bokehjs-file-name",
        "bokehjs",
        "bokeh-widgets.min.js",
        'this.input_el=(0,o.input)({type:"file",class:d.input,multiple:e,accept:i,disabled:t,'
        "webkitdirectory:n})",
        'this.input_el=(0,o.input)({type:"file",class:d.input,multiple:e,accept:i,disabled:t,'
        'webkitdirectory:n,"aria-label":this.model.title||`Choose a ${i||"any"} file`})',
        "a file input had no label (Panel passes no title)",
    ),
)
