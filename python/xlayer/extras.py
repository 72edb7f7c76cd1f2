"""Optional dependencies (pyproject.toml's extras) and the error that names the one to
install when a feature needs it."""

from __future__ import annotations

import importlib

# Module -> the extra that installs it.
EXTRAS = {"matplotlib": "plot"}


class MissingExtraError(ImportError):
    """A feature needs an optional dependency that is not installed; the message names
    the extra that installs it (`pip install 'xlayer[plot]'`)."""


def require(module: str, what: str) -> None:
    """Import `module` or raise MissingExtraError saying that `what` needs it."""
    try:
        importlib.import_module(module)
    except ImportError:
        extra = EXTRAS.get(module)
        how = f"pip install 'xlayer[{extra}]' (or pip install {module})" if extra else f"pip install {module}"
        raise MissingExtraError(f"{what} needs {module}, which is not installed; install it with "
                                f"{how}") from None
