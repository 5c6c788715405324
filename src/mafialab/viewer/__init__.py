"""The static, offline web viewer (layer ``viewer``): build a site from game logs, serve it with its fork API."""

# Names below marked ``X as X`` are used by other mafialab packages and are not public API
# (not in __all__, not in docs/api.md); they may change without notice.

from mafialab.viewer._api import MAX_BODY as MAX_BODY
from mafialab.viewer._api import ForkRequest as ForkRequest
from mafialab.viewer._api import ForkService as ForkService
from mafialab.viewer._api import JobStatus as JobStatus
from mafialab.viewer._api import check_allowed_agents as check_allowed_agents
from mafialab.viewer._api import create_app as create_app
from mafialab.viewer._beliefs import SMALL_BIN as SMALL_BIN
from mafialab.viewer._beliefs import (
    Belief,
)
from mafialab.viewer._beliefs import normalise_probe as normalise_probe
from mafialab.viewer._beliefs import role_vocabulary as role_vocabulary
from mafialab.viewer._build import STEP_KINDS as STEP_KINDS
from mafialab.viewer._build import (
    SiteSummary,
    ViewerError,
    build_site,
)
from mafialab.viewer._build import build_game as build_game
from mafialab.viewer._build import file_id as file_id
from mafialab.viewer._build import read_probes as read_probes
from mafialab.viewer._build import replace_notes as replace_notes
from mafialab.viewer._build import viewer_templates as viewer_templates
from mafialab.viewer._corpus import corpus_metrics as corpus_metrics
from mafialab.viewer._serve import (
    HOST,
    SiteServer,
)
from mafialab.viewer._serve import check_host as check_host

__all__ = [
    "Belief",
    "HOST",
    "SiteServer",
    "SiteSummary",
    "ViewerError",
    "build_site",
]
