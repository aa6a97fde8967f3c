"""The annotation app's workflow core (issue 12): users, authoring, blind verification, expert review,
agreement, error analysis and the dashboard, as transactions on the workspace database (no HTTP here; the web
app in :mod:`zuhyo.annotate.app` is a thin layer over these functions)."""

from __future__ import annotations

from zuhyo.annotate.assign import (
    discard,
    get_revision,
    list_revisions,
    next_author_task,
    next_verify_task,
    release_task,
    resolve_flag,
    skip_task,
    submit_authored,
    submit_revision,
    submit_verification,
)
from zuhyo.annotate.dashboard import dashboard
from zuhyo.annotate.errors_analysis import error_breakdown, import_error_samples, next_error_task, submit_error_tag
from zuhyo.annotate.review import assign_reviews, next_review_task, review_alpha, submit_review
from zuhyo.annotate.users import (
    User,
    activate,
    add_user,
    authenticate,
    deactivate,
    get_user,
    list_users,
    set_locale,
    set_password,
    set_roles,
)
from zuhyo.annotate.workflow import (
    DEFAULT_ERROR_TYPES,
    ROLES,
    AuthorTask,
    Conflict,
    DraftView,
    ErrorTask,
    FigureView,
    FlagView,
    Matcher,
    MatchOutcome,
    NotAllowed,
    NotFound,
    ReviewTask,
    ReviewView,
    RevisionTask,
    SubmitResult,
    VerificationView,
    VerifyTask,
    WorkflowConfig,
    WorkflowError,
)
from zuhyo.annotate.workflow_match import judge_matcher, rules_matcher

__all__ = [
    "DEFAULT_ERROR_TYPES", "ROLES", "AuthorTask", "Conflict", "DraftView", "ErrorTask", "FigureView", "FlagView",
    "MatchOutcome", "Matcher", "NotAllowed", "NotFound", "ReviewTask", "ReviewView", "RevisionTask", "SubmitResult",
    "User", "VerificationView", "VerifyTask", "WorkflowConfig", "WorkflowError", "activate", "add_user",
    "assign_reviews", "authenticate", "dashboard", "deactivate", "discard", "error_breakdown", "get_revision",
    "get_user",
    "import_error_samples", "judge_matcher", "list_revisions", "list_users", "next_author_task", "next_error_task",
    "next_review_task", "next_verify_task", "release_task", "resolve_flag", "review_alpha", "rules_matcher",
    "set_locale", "set_password", "set_roles", "skip_task", "submit_authored", "submit_error_tag", "submit_review",
    "submit_revision", "submit_verification",
]
