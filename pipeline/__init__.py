"""incidentlib: turn public postmortems into a curated, reviewed library of case records.

The import package is `pipeline`; the command is `incidentlib`. The public API is
built from each module's `__all__`.
"""

from pipeline.errors import *  # noqa: F403
from pipeline.errors import __all__ as _errors
from pipeline.fmt import *  # noqa: F403
from pipeline.fmt import __all__ as _fmt
from pipeline.ids import *  # noqa: F403
from pipeline.ids import __all__ as _ids
from pipeline.models import *  # noqa: F403
from pipeline.models import __all__ as _models
from pipeline.reasons import *  # noqa: F403
from pipeline.reasons import __all__ as _reasons
from pipeline.settings import *  # noqa: F403
from pipeline.settings import __all__ as _settings
from pipeline.store import *  # noqa: F403
from pipeline.store import __all__ as _store
from pipeline.validate import *  # noqa: F403
from pipeline.validate import __all__ as _validate

__all__ = sorted({*_errors, *_fmt, *_ids, *_models, *_reasons, *_settings, *_store, *_validate})
# The one place the version is written: pyproject.toml reads it from here (setuptools, statically).
__version__ = "0.2.0"
