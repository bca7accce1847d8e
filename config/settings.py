"""Penumbra settings, all from environment variables.

No environment at all is the embedded default: SQLite in ``var/`` and background tasks run in-process.
``DATABASE_URL`` selects PostgreSQL and ``REDIS_URL`` a real Celery broker. A malformed value stops the start
with a message that names the variable.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

import dj_database_url

from config.env import SettingsError, database_url, env_bool, env_int, env_list, redis_url

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("PENUMBRA_DATA_DIR", BASE_DIR / "var"))


def _secret_key() -> str:
    # A fresh machine needs no setup, so the embedded default keeps a generated key in its data folder.
    configured = os.environ.get("SECRET_KEY", "").strip()
    if configured:
        if len(configured) < 32:
            raise SettingsError("SECRET_KEY: expected at least 32 characters")
        return configured
    key_file = DATA_DIR / "secret_key"
    if not key_file.exists():
        DATA_DIR.mkdir(parents=True, exist_ok=True)
        key_file.write_text(secrets.token_urlsafe(50))
        key_file.chmod(0o600)
    return key_file.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "projects",
    "annotation",
    "aggregation",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "config.input_limits.RefuseNulInQueryMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

_database_url = database_url()
EMBEDDED = _database_url is None
DATABASES: dict[str, dict[str, Any]]
if _database_url is None:
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": DATA_DIR / "penumbra.sqlite3",
            # Annotators save concurrently even in the demo; wait for the write lock instead of failing.
            "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE"},
        }
    }
else:
    DATABASES = {"default": dict(dj_database_url.parse(_database_url, conn_max_age=env_int("DB_CONN_MAX_AGE", 60)))}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / "staticfiles"))
# WhiteNoise wants the folder even when files come from the finders (no collectstatic in the demo).
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# Served by WhiteNoise in every mode, so the demo and production serve static files the same way.
WHITENOISE_USE_FINDERS = True
MEDIA_ROOT = DATA_DIR / "media"

SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.CursorPagination",
    "PAGE_SIZE": 100,
    "EXCEPTION_HANDLER": "config.api_errors.exception_handler",
    "DEFAULT_PARSER_CLASSES": [
        "config.input_limits.SafeJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Penumbra API",
    "DESCRIPTION": "Preference annotation with uncertainty: projects, items, annotations, aggregates, exports.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.openapi.add_error_responses",
    ],
}

# Celery. Without REDIS_URL tasks run in-process (the embedded default).
_redis_url = redis_url()
CELERY_BROKER_URL = _redis_url or "memory://"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = _redis_url is None
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 300, minimum=1)
CELERY_TASK_TIME_LIMIT = CELERY_TASK_SOFT_TIME_LIMIT + 30
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_QUEUE", "penumbra")
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A save must never fail because the broker is down: reconciliation picks the work up later.
CELERY_BROKER_TRANSPORT_OPTIONS = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2}
# Finds aggregates older than their newest annotation (Redis or a worker was down) and recomputes them.
CELERY_BEAT_SCHEDULE: dict[str, dict[str, object]] = {
    "aggregates-reconcile": {
        "task": "aggregation.aggregates_reconcile",
        "schedule": float(env_int("AGGREGATION_RECONCILE_SECONDS", 60, minimum=5)),
    },
    # Queues jobs whose task never reached the broker and jobs whose worker stopped beating (projects.jobs).
    "jobs-recover": {
        "task": "projects.jobs_recover",
        "schedule": float(env_int("JOB_RECOVER_SECONDS", 30, minimum=1)),
    },
}
# Background jobs (projects.jobs): a running job beats every JOB_HEARTBEAT_SECONDS; one silent for
# JOB_STALE_SECONDS lost its worker and is run again, at most JOB_MAX_ATTEMPTS times in all.
JOB_HEARTBEAT_SECONDS = env_int("JOB_HEARTBEAT_SECONDS", 5, minimum=1)
JOB_STALE_SECONDS = env_int("JOB_STALE_SECONDS", 60, minimum=2)
JOB_MAX_ATTEMPTS = env_int("JOB_MAX_ATTEMPTS", 3, minimum=1)
# A pending job queued this long ago and never started is queued again (its message may have been lost).
JOB_REQUEUE_SECONDS = env_int("JOB_REQUEUE_SECONDS", 600, minimum=1)
# Fault tests only: milliseconds an import sleeps every 100 lines, so a worker can be killed half-way.
JOB_TEST_PAUSE_MS = env_int("JOB_TEST_PAUSE_MS", 0)
# Project-level figures are recomputed this many seconds after the first save of a burst (debounce).
AGGREGATION_PROJECT_DELAY = env_int("AGGREGATION_PROJECT_DELAY", 3)
# Embedded mode (SQLite, tasks in-process): one background thread does the recomputation, so requests never wait.
AGGREGATION_IN_THREAD = env_bool("AGGREGATION_IN_THREAD", EMBEDDED and CELERY_TASK_ALWAYS_EAGER)
REDIS_URL = _redis_url

# Annotation
CLAIM_SECONDS = env_int("PENUMBRA_CLAIM_SECONDS", 900, minimum=10)

# LLM suggestions: projects may override; these are the fall-backs.
LLM_BASE_URL = os.environ.get("LLM_BASE_URL", "")
LLM_API_KEY = os.environ.get("LLM_API_KEY", "")
LLM_MODEL = os.environ.get("LLM_MODEL", "")
LLM_TIMEOUT_SECONDS = env_int("LLM_TIMEOUT_SECONDS", 60, minimum=1)
LLM_CONCURRENCY = env_int("LLM_CONCURRENCY", 4, minimum=1)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}
