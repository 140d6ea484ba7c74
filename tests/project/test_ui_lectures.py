"""The five lectures named once (:mod:`pyplay.ui.lectures`): the registry, the page's texts
naming a lecture by its author instead of a course code or a bare "the lecture", the labels
naming it in short, the ``{{lecture:KEY}}`` placeholder of the lessons' Markdown, and the About
tab's list of references."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from paths import ROOT
from pyplay.ui.lectures import LECTURES, fill_lectures, lecture, lecture_label, reference_list
from pyplay.ui.lesson_page import page_text
from pyplay.ui.lessons import LESSONS

UI = ROOT / "pyplay" / "ui"
REGISTRY = UI / "lectures.py"  # the only place a course code or institution may be written
# what the page said before the registry: a course code or institute in place of the author
OLD = re.compile(r"TEK5040 lecture|IDSIA lecture|NLP lecture", re.IGNORECASE)
CODES = re.compile(r"TEK5040|TEK9040|IDSIA")
# a lecture left unnamed: "the lecture", "the lecture's" (across a line break too) or a label's
# "(lecture)"; "the lectures", "Solberg's lecture" and "lecture 8" name them
BARE = re.compile(r"\b[Tt]he\s+lecture\b(?!s)|\(lecture\)")
# the texts that used to say "the TEK5040 lecture" (Solberg) or "the IDSIA lecture" (Wand)
# and the lecture each names now
NAMED = [
    ("pyplay.ui.lessons.rnn.residual_view", "HELP", "solberg"),
    ("pyplay.ui.lessons.seq2seq.shared_view", "HELP", "solberg"),
    ("pyplay.ui.lessons.ctc.race_view", "RACE_HELP", "solberg"),
    ("pyplay.ui.lessons.glimpse.view", "LECTURE", "solberg"),
    ("pyplay.ui.lessons.seq2seq.by_length_view", "HELP", "wand"),
    ("pyplay.ui.lessons.ctc.lattice_view", "PATHS_HELP", "wand"),
    ("pyplay.ui.lessons.images.view", "CAPTION_EQUATIONS", "wand"),
    ("pyplay.ui.lessons.images.view", "GLIMPSE_EQUATIONS", "solberg"),
    # and those that said "the lecture" without naming it
    ("pyplay.ui.lessons.ctc.decoding_view", "DECODING_HELP", "wand"),
    ("pyplay.ui.lessons.seq2seq.lexicon_view", "HELP", "wand"),
    ("pyplay.ui.lessons.seq2seq.view", "HELP", "wand"),
    ("pyplay.ui.lessons.transformer.view", "HELP", "wand"),
    ("pyplay.ui.lessons.dynamic.book_view", "PYTORCH", "nlp"),
    ("pyplay.ui.lessons.memory.view", "LOCATION_HELP", "solberg"),
]
# labels too short for the short form, and the lecture each names in brackets
LABELLED = [
    ("pyplay.ui.lessons.ctc.lattice_view", "LECTURE_BUTTON", "wand"),
    ("pyplay.ui.lessons.dynamic.book_state", "NETWORKS", "nlp"),
    ("pyplay.ui.lessons.memory.view", "FEEDBACK", "solberg"),
    ("pyplay.ui.lessons.memory.view", "FORMS", "solberg"),
]


def _shown_literals(source: str) -> list[tuple[int, str]]:
    """Every string literal of Python ``source`` that is not documentation (a module's,
    class's or function's docstring, or any other string standing alone as a statement),
    with its line; an f-string gives its literal parts."""
    tree = ast.parse(source)
    documentation = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in documentation
    ]


@functools.cache
def _literals_of(path: Path) -> tuple[tuple[int, str], ...]:
    """:func:`_shown_literals` of the file ``path``, read and parsed once for the module's
    tests (two of them scan every file of the UI)."""
    return tuple(_shown_literals(path.read_text(encoding="utf-8")))


def _markdown_files() -> list[Path]:
    return sorted(UI.rglob("*.md"))


def _loaded(path: Path) -> str:
    """The prose of Markdown file ``path`` as the page loads it (placeholders filled)."""
    package = ".".join(path.relative_to(UI.parent.parent).parent.parts)
    text = page_text(f"{package}.{path.name.removesuffix('help.md')}view")
    return f"{text.heading}\n{text.help}\n{text.departs}"


def test_the_registry_holds_the_five_lectures_each_once_with_a_reference():
    assert [entry.number for entry in LECTURES] == ["000", "001", "002", "003", "004"]
    assert [entry.key for entry in LECTURES] == ["hagan", "nlp", "wand", "schmidt", "solberg"]
    for entry in LECTURES:
        assert entry.short.strip() and len(entry.reference) > 40, entry.key
        assert lecture(entry.key) == entry.short
        assert lecture_label(entry.key) == entry.label and len(entry.label) <= 10
        assert entry.label.split()[0] in entry.short  # the label is the short form, shortened
        # a short form goes into $NAME-filled prose and must not read as a placeholder
        assert not {"$", "{", "}"} & set(entry.short), entry.key
    assert len({entry.short for entry in LECTURES}) == len(LECTURES)
    assert len({entry.label for entry in LECTURES}) == len(LECTURES)
    references = {entry.key: entry.reference for entry in LECTURES}
    assert "Michael Wand" in references["wand"] and "IDSIA" in references["wand"]
    assert "2024" in references["wand"]
    assert "Eilif Solberg" in references["solberg"] and "TEK5040" in references["solberg"]
    assert "Robin M. Schmidt" in references["schmidt"] and "Tübingen" in references["schmidt"]
    assert "Hagan" in references["hagan"] and "Neural Network Design" in references["hagan"]
    assert "lecture 8" in references["nlp"] and "no author" in references["nlp"]


def test_an_unknown_lecture_key_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match="'tek5040'"):
        lecture("tek5040")
    with pytest.raises(ValueError, match="'tek5040'"):
        lecture_label("tek5040")


def test_the_placeholder_is_replaced_by_the_lectures_short_form():
    text = "As {{lecture:solberg}} and {{lecture:wand}} show; {{lecture:hagan}}, eq. 6.1."
    assert fill_lectures(text) == (
        f"As {lecture('solberg')} and {lecture('wand')} show; {lecture('hagan')}, eq. 6.1."
    )
    assert fill_lectures("no placeholder, $NAME and {one brace}") == (
        "no placeholder, $NAME and {one brace}"
    )


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("see {{lecture:tek5040}}", "'tek5040'"),
        ("see {{lecture:}}", re.escape("'{{lecture:}}'")),
        ("see {{ __import__('os') }}", re.escape("__import__('os')")),
        ("see {{lecture:wand.__class__}}", re.escape("wand.__class__")),
    ],
)
def test_an_unknown_placeholder_is_a_value_error_naming_it_and_the_file(text, named):
    with pytest.raises(ValueError, match=named) as error:
        fill_lectures(text, "pyplay/ui/lessons/x/help.md")
    assert str(error.value).startswith("pyplay/ui/lessons/x/help.md: ")


def test_a_help_file_naming_an_unknown_lecture_fails_when_it_is_loaded(tmp_path, monkeypatch):
    folder = tmp_path / "lecturepkg"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "help.md").write_text("## Heading\n\nAs {{lecture:nobody}} says.\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    page_text.cache_clear()
    with pytest.raises(ValueError, match=r"lecturepkg/help\.md: unknown lecture 'nobody'"):
        page_text("lecturepkg.view")
    (folder / "help.md").write_text("## Heading\n\nAs {{lecture:schmidt}} says.\n")
    page_text.cache_clear()
    assert page_text("lecturepkg.view").help == f"As {lecture('schmidt')} says."
    page_text.cache_clear()


def test_the_scan_finds_a_course_code_in_a_shown_string_but_not_in_a_docstring():
    source = (
        '"""The TEK5040 lecture (a docstring)."""\n'
        "def f():\n"
        '    """The IDSIA lecture, documented."""\n'
        '    return "the TEK5040 lecture" + f"the IDSIA lecture\'s {x}"\n'
        'HELP = ("The NLP lecture\'s slide " "says")\n'
    )
    found = [(line, OLD.findall(text)) for line, text in _shown_literals(source)]
    assert sorted(f for f in found if f[1]) == [
        (4, ["IDSIA lecture"]),
        (4, ["TEK5040 lecture"]),
        (5, ["NLP lecture"]),
    ]


def test_no_string_shown_on_the_page_names_a_lecture_by_its_course_code():
    """Every string literal of the UI's code (docstrings aside: they are for developers) and
    every Markdown file, as written and as loaded: a lecture is named by its author
    (:func:`~pyplay.ui.lectures.lecture`); course codes only in the registry's references."""
    found = []
    for path in sorted(UI.rglob("*.py")):
        for line, text in _literals_of(path):
            if OLD.search(text) or (path != REGISTRY and CODES.search(text)):
                found.append(f"{path.relative_to(UI)}:{line}: {text[:80]!r}")
    markdown = _markdown_files()
    assert len(markdown) >= 15  # every lesson's help, the dynamic sub-tabs' too
    for path in markdown:
        for text in (path.read_text(encoding="utf-8"), _loaded(path)):
            if OLD.search(text) or CODES.search(text):
                found.append(f"{path.relative_to(UI)}: {CODES.findall(text) or OLD.findall(text)}")
    assert found == []


def test_the_help_files_name_the_lectures_through_the_registry():
    loaded = {path.relative_to(UI).as_posix(): _loaded(path) for path in _markdown_files()}
    assert lecture("solberg") in loaded["lessons/ctc/help.md"]
    assert lecture("hagan") in loaded["lessons/textbook/help.md"]
    assert lecture("schmidt") in loaded["lessons/pointer/help.md"]
    assert lecture("nlp") in loaded["lessons/rnn/help.md"]
    assert lecture("wand") in loaded["lessons/rnn/help.md"]
    for part in ("adaptive", "book", "rtrl", "stability"):  # the sub-tabs of lecture 8
        assert lecture("nlp") in loaded[f"lessons/dynamic/{part}_help.md"], part
    assert lecture("wand") in loaded["lessons/images/help.md"]
    assert lecture("solberg") in loaded["lessons/images/help.md"]
    assert all("{{" not in text for text in loaded.values())


@pytest.mark.parametrize(("module", "name", "key"), NAMED, ids=[f"{m}.{n}" for m, n, _ in NAMED])
def test_the_views_name_the_lecture_they_quote(module, name, key):
    text = str(getattr(__import__(module, fromlist=[name]), name))  # a text or a dict of them
    assert lecture(key) in text and not OLD.search(text) and not CODES.search(text)
    assert not BARE.search(text)


@pytest.mark.parametrize(
    ("module", "name", "key"), LABELLED, ids=[f"{m}.{n}" for m, n, _ in LABELLED]
)
def test_the_labels_name_their_lecture_in_short(module, name, key):
    """A button, a sub-tab or an option says which lecture in brackets or before its
    example ("LSTM and GRU (lecture 8)", "Wand's example: H EH L OU")."""
    value = getattr(__import__(module, fromlist=[name]), name)
    labels = list(value) if isinstance(value, dict) else [value]
    named = [label for label in labels if lecture_label(key) in label]
    assert named and not any(BARE.search(label) for label in labels), labels


def test_the_sub_tab_titles_name_their_lecture():
    from pyplay.ui.lessons import SPECS

    assert SPECS["lecture_rnn"].title == f"LSTM and GRU ({lecture_label('nlp')})"
    assert not any(BARE.search(spec.title) for spec in LESSONS)


def test_the_scan_finds_a_bare_the_lecture_but_not_a_named_one():
    """What the page said before (issue 36) is found; a named lecture is not."""
    unnamed = [
        "LSTM and GRU (lecture)",
        "The lecture's example: H EH L OU",
        "*Where the page departs from the lecture*: the lecture's text fixes",
        "a gate; the\nlecture resets the delayed output",
        "Where this departs from the lecture",
    ]
    assert [text for text in unnamed if not BARE.search(text)] == []
    named = [
        "**The lectures.** The lessons follow five texts",
        f"Where this departs from {lecture('nlp')}",
        f"LSTM and GRU ({lecture_label('nlp')})",
        f"{lecture_label('wand')}'s example: H EH L OU",
        f"the typical setup of {lecture('wand')}",
        "a lecture's full reference",
    ]
    assert [text for text in named if BARE.search(text)] == []


def test_no_help_text_or_label_says_the_lecture_without_naming_it():
    """Every string the UI's code shows (docstrings aside), every Markdown file as loaded
    (placeholders filled), every lesson's and sub-tab's title, its line and Try this, and the
    About tab: a lecture is named (:func:`~pyplay.ui.lectures.lecture`, or
    :func:`~pyplay.ui.lectures.lecture_label` in a label), never a bare "the lecture"."""
    from pyplay.ui.app import ABOUT

    found = []
    for path in sorted(UI.rglob("*.py")):
        for line, text in _literals_of(path):
            if BARE.search(text):
                found.append(
                    f"{path.relative_to(UI)}:{line}: {BARE.findall(text)} in {text[:60]!r}"
                )
    for path in _markdown_files():
        for match in BARE.finditer(_loaded(path)):
            found.append(f"{path.relative_to(UI)}: {match.group(0)!r}")
    shown = [ABOUT]
    for spec in LESSONS:
        shown += [spec.title, spec.about, *(f"{e.label} {e.expect}" for e in spec.experiments)]
        state = spec.state_class()
        shown += [p.doc or "" for p in state.param.objects("existing").values()]
    found += [text[:80] for text in shown if BARE.search(text)]
    assert found == []


def test_the_lesson_specs_and_settings_name_no_course_code():
    """The lines of "Start here" and About, the Try this buttons and what they promise, and
    every setting's description (a widget's tooltip)."""
    shown = []
    for spec in LESSONS:
        shown.append(spec.about)
        shown += [f"{e.label} {e.expect}" for e in spec.experiments]
        state = spec.state_class()
        shown += [p.doc or "" for p in state.param.objects("existing").values()]
    assert [text for text in shown if OLD.search(text) or CODES.search(text)] == []
    about = {spec.key: spec.about for spec in LESSONS}
    assert lecture("hagan") in about["dynamic"]
    state = next(spec for spec in LESSONS if spec.key == "rnn").state_class()
    assert lecture("wand") in state.param["feedforward_layers"].doc


def test_about_lists_every_lecture_with_its_reference():
    from pyplay.ui.app import ABOUT

    listed = reference_list()
    assert listed in ABOUT
    items = listed.splitlines()
    assert len(items) == len(LECTURES)
    for item, entry in zip(items, LECTURES, strict=True):
        assert item.startswith("- **") and entry.reference in item
        assert entry.short[1:] in item  # the short form, its first letter in upper case
        assert f"(*{entry.label}* in labels)" in item
    assert not OLD.search(ABOUT)
    assert not CODES.search(ABOUT.replace(listed, ""))  # codes in the references only
