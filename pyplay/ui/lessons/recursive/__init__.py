"""The "Recursive networks" lesson: state, view, its heading and help (``help.md``) and "show
as code"."""
