"""A lesson of the playground (its spec: :data:`pyplay.ui.lessons.LESSONS`): ``state.py``
(settings and actions), ``view.py`` (the page), ``figures.py`` (its figures), ``help.md`` (its
heading and help), ``code.py`` (its "show as code" script)."""
