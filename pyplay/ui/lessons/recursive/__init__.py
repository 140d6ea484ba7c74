"""The "Recursive networks" lesson: state, view and "show as code"."""
