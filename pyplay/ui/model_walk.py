"""A faster walk of a Bokeh document's model graph, the same models found.

Bokeh keeps the set of a document's models by walking the graph from its roots after every
change to it (``DocumentModelManager.recompute``: every property that may hold a model, of
every model reached). Each section a learner opens, each lesson built, each view replaced
changes the graph, so each pays one whole walk. Measured in the page (Pyodide, one lesson of
about 1,200 models): 1.1 s per walk, 14 of the 22 s that opening a lesson's 13 sections took;
natively 0.25 s. Four fifths of it went to properties never set, whose default Bokeh computes
anew on every read (theme lookups, class overrides) only for the walk to find no model in it.

:func:`install` replaces Bokeh's two visiting functions (``bokeh.model.util``) by
:func:`visit_references` and :func:`visit_value`, and ``recompute`` by :func:`recompute`,
which reads each model's name without computing its default. The visitors find exactly what
Bokeh's find:

- a property set on the model, or whose unstable default the model already holds
  (``_unstable_default_values``), is read from the model's own dictionary, as Bokeh's getter
  would return it;
- a property the document's theme gives a value is read through Bokeh's getter;
- a property never set whose class default is stable (the same value for every instance: not a
  callable, not a container) is skipped once that default, read once per class and property,
  is seen to hold no model (a required property left unset is read, and raises, as in Bokeh);
- anything else (an unstable default not made yet, such as a plot's toolbar) is read through
  Bokeh's getter, which makes and keeps it, as Bokeh's walk does.

``tests/ui/test_model_walk.py`` checks on the whole playground's document that the models
found and their order are Bokeh's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bokeh.core.has_props import HasProps
from bokeh.core.property.singletons import Undefined
from bokeh.document.models import DocumentModelManager
from bokeh.model import Model
from bokeh.model import util as model_util
from bokeh.util.dataclasses import entries, is_dataclass
from bokeh.util.datatypes import MultiValuedDict

__all__ = ["install", "installed", "name_of", "recompute", "visit_references", "visit_value"]

Visitor = Callable[[Model], None]

# Bokeh's own functions, kept for uninstall and for the tests that compare the two walks
BOKEH_VISIT_REFERENCES = model_util.visit_immediate_value_references
BOKEH_VISIT_VALUE = model_util.visit_value_and_its_immediate_references
BOKEH_RECOMPUTE = DocumentModelManager.recompute

_SCALARS = (int, float, str, bool, type(None))
# (class, property name) -> whether the property, when never set, can be skipped: its default is
# stable (one value for every instance of the class) and holds no model
_SKIP_UNSET: dict[tuple[type, str], bool] = {}


def themed_values(obj: HasProps) -> dict[str, Any] | None:
    """``obj.themed_values()`` without its failed attribute lookup for a model no theme touched
    (``HasProps.__getattr__``; the getter took 0.9 s over 56,000 calls while the page opened
    one lesson's 13 sections)."""
    found: dict[str, Any] | None = obj.__dict__.get("__themed_values__")
    return found


def _skips_unset(obj: HasProps, name: str) -> bool:
    """Whether ``obj``'s property ``name``, never set and not themed, can hold no model."""
    key = (type(obj), name)
    skip = _SKIP_UNSET.get(key)
    if skip is None:
        descriptor = obj.lookup(name)
        skip = not descriptor.has_unstable_default(obj)
        if skip:  # stable: the same value for every instance, so look inside it once
            default = descriptor.instance_default(obj)
            found: list[Model] = []
            visit_value(default, found.append)
            skip = not found and default is not Undefined  # required: Bokeh's getter raises
        _SKIP_UNSET[key] = skip
    return skip


def visit_references(value: Any, visitor: Visitor) -> None:
    """Visit every model ``value`` refers to directly (not the models they refer to), as
    Bokeh's ``visit_immediate_value_references`` does, without computing the defaults of
    properties that cannot hold a model."""
    if not isinstance(value, HasProps):
        visit_value(value, visitor)
        return
    values = value._property_values
    made = value._unstable_default_values
    themed = themed_values(value)
    for name in value.properties_with_refs():
        if name in values:
            child = values[name]
        elif themed is not None and name in themed:
            child = getattr(value, name)  # the theme's value, through Bokeh's getter
        elif name in made:
            child = made[name]
        elif _skips_unset(value, name):
            continue
        else:
            child = getattr(value, name)  # makes and keeps the unstable default
        visit_value(child, visitor)


def visit_value(obj: Any, visitor: Visitor) -> None:
    """Visit the models in ``obj`` (a model itself, or inside lists, tuples, dictionaries,
    dataclasses and non-model ``HasProps``), not descending into a model: Bokeh's
    ``visit_value_and_its_immediate_references``."""
    typ = type(obj)
    if typ in _SCALARS:
        return
    if typ is list or issubclass(typ, list | tuple):
        for item in obj:
            visit_value(item, visitor)
    elif issubclass(typ, dict):
        for key, item in obj.items():
            visit_value(key, visitor)
            visit_value(item, visitor)
    elif issubclass(typ, HasProps):
        if issubclass(typ, Model):
            visitor(obj)
        else:
            visit_references(obj, visitor)
    elif is_dataclass(obj):
        for _, item in entries(obj):
            visit_value(item, visitor)


def name_of(model: Model) -> str | None:
    """``model.name``, read from the model's own values when set (the getter computes the
    default, ``None``, anew on each read: 2.2 s of the 4.9 s that 13 walks took in the page)."""
    values = model._property_values
    if "name" in values:
        name: str | None = values["name"]
        return name
    themed = themed_values(model)
    if (themed is not None and "name" in themed) or not _skips_unset(model, "name"):
        return model.name
    return None


def recompute(self: DocumentModelManager) -> None:
    """Bokeh's ``DocumentModelManager.recompute`` (the set of a document's models, from the
    models reachable from its roots; those no longer reached are detached, new ones attached),
    with the names read by :func:`name_of`."""
    document = self._document()
    if document is None:
        return
    new_models: set[Model] = set()
    for root in document.roots:
        new_models |= root.references()
    old_models = set(self._models.values())
    recomputed: dict[Any, Model] = {}
    by_name: MultiValuedDict[str, Model] = MultiValuedDict()
    for model in new_models:
        recomputed[model.id] = model
        name = name_of(model)
        if name is not None:
            by_name.add_value(name, model)
    for model in old_models - new_models:
        self._seen_model_ids.add(model.id)
        model._detach_document()
    for model in new_models - old_models:
        model._attach_document(document)
        self._new_models.add(model)
    self._models = recomputed
    self._models_by_name = by_name


def install() -> None:
    """Make Bokeh's document walks (``collect_models`` and so ``recompute``) use this module's
    visitors. Idempotent."""
    model_util.visit_immediate_value_references = visit_references
    model_util.visit_value_and_its_immediate_references = visit_value
    DocumentModelManager.recompute = recompute  # type: ignore[method-assign]


def uninstall() -> None:
    """Put Bokeh's own visitors back (the tests compare the two walks)."""
    model_util.visit_immediate_value_references = BOKEH_VISIT_REFERENCES
    model_util.visit_value_and_its_immediate_references = BOKEH_VISIT_VALUE
    DocumentModelManager.recompute = BOKEH_RECOMPUTE  # type: ignore[method-assign]


def installed() -> bool:
    """Whether :func:`install` is in force."""
    return model_util.visit_immediate_value_references is visit_references
