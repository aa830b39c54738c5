"""Errors a user can act on, reported as one line instead of a traceback."""

from __future__ import annotations


class StudyError(Exception):
    """Something the user can fix (config, missing GPU, failed build...).

    The message is one line that says what is wrong and how to fix it.
    """

