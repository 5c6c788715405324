"""The static, offline web viewer (layer ``viewer``): build a site from game logs, serve it with its fork API."""

from mafialab.viewer._api import MAX_BODY, ForkRequest, ForkService, JobStatus, check_allowed_agents, create_app
from mafialab.viewer._beliefs import (
    SMALL_BIN,
    Belief,
    normalise_probe,
    role_vocabulary,
)
from mafialab.viewer._build import (
    STEP_KINDS,
    SiteSummary,
    ViewerError,
    build_game,
    build_site,
    file_id,
    read_probes,
    replace_notes,
    viewer_templates,
)
from mafialab.viewer._corpus import corpus_metrics
from mafialab.viewer._serve import HOST, SiteServer, check_host

__all__ = [
    "HOST",
    "MAX_BODY",
    "ForkRequest",
    "ForkService",
    "JobStatus",
    "SMALL_BIN",
    "STEP_KINDS",
    "Belief",
    "SiteServer",
    "SiteSummary",
    "ViewerError",
    "build_game",
    "build_site",
    "replace_notes",
    "check_allowed_agents",
    "check_host",
    "create_app",
    "corpus_metrics",
    "file_id",
    "normalise_probe",
    "read_probes",
    "role_vocabulary",
    "viewer_templates",
]
