"""Penumbra settings, all from environment variables.

No environment at all is the embedded default: SQLite in ``var/`` and background tasks run in-process.
``DATABASE_URL`` selects PostgreSQL and ``REDIS_URL`` a real Celery broker. A malformed value stops the start
with a message that names the variable.
"""

from __future__ import annotations

import os
import secrets
from datetime import timedelta
from pathlib import Path
from typing import Any

import dj_database_url

from config.env import SettingsError, database_url, env_bool, env_choice, env_int, env_list, redis_url
from config.redis_breaker import BreakerConnection

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
    "axes",
    "csp",
    "projects",
    "annotation",
    "aggregation",
    "suggestions",
    "projects.webhooks",
    "mozilla_django_oidc",
]

MIDDLEWARE = [
    "config.health.HealthCheckMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The session, its user and the project's criteria in one Redis round trip, before anything reads them.
    "config.cache_prefetch.CachePrefetchMiddleware",
    # After the session and before CommonMiddleware, as Django asks: the language cookie (set on the account page or
    # by a ?lang= link), else the browser's Accept-Language, else LANGUAGE_CODE.
    "django.middleware.locale.LocaleMiddleware",
    # A ?lang= on a study link or any page beats the cookie and Accept-Language, and is kept (config/language.py).
    "config.language.ChosenLanguageMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "config.input_limits.RefuseControlCharactersMiddleware",
    # A study participant reaches only the views marked open to participants; everything else answers 404.
    "annotation.crowd.gate.ParticipantGateMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into the lockout page.
    "axes.middleware.AxesMiddleware",
    # Marks a browser that signed in as a known device of the account (config/login_throttle.py).
    "config.login_throttle.DeviceCookieMiddleware",
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
                "config.context_processors.sign_in",
            ],
        },
    },
]

_database_url = database_url()
_redis_url = redis_url()
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
    # Health checks: a kept connection that died with a PostgreSQL restart is replaced at the start of the next
    # request instead of failing it.
    DATABASES = {
        "default": dict(
            dj_database_url.parse(_database_url, conn_max_age=env_int("DB_CONN_MAX_AGE", 60), conn_health_checks=True)
        )
    }
    # Behind PgBouncer in transaction mode consecutive transactions may run on different server connections, so
    # a cursor kept open across them (Django's .iterator() outside a transaction declares one WITH HOLD) would be
    # gone: fetch client-side instead. The rest is transaction-pooling safe as it is (config/locks.py, SET LOCAL,
    # temporary tables ON COMMIT DROP, no prepared statements with psycopg's client-side binding).
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = env_bool("DB_TRANSACTION_POOLING", False)
    # A read replica for the leads' dashboard (config/replica.py); the tests read the primary under that name.
    _replica_url = os.environ.get("DATABASE_REPLICA_URL", "")
    if _replica_url:
        DATABASES["replica"] = {
            **dj_database_url.parse(_replica_url, conn_max_age=env_int("DB_CONN_MAX_AGE", 60), conn_health_checks=True),
            "DISABLE_SERVER_SIDE_CURSORS": DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"],
            "TEST": {"MIRROR": "default"},
        }
DATABASE_ROUTERS = ["config.replica.ReplicaRouter"]
# While the database is unreachable requests answer 503 with this Retry-After (config/outage.py).
DATABASE_RETRY_AFTER_SECONDS = env_int("DATABASE_RETRY_AFTER_SECONDS", 5, minimum=1)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    # Refuses a locked-out account or address before the password is even checked.
    "axes.backends.AxesStandaloneBackend",
    # ModelBackend with the signed-in user read from the cache (no user query per request).
    "config.auth.CachedModelBackend",
    # Single sign-on (projects.sso): answers only the provider's callback, and only when OIDC_ENABLED.
    "projects.sso.PenumbraOIDCBackend",
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"

# Single sign-on through OpenID Connect (projects.sso, mozilla-django-oidc), off by default. The endpoints are the
# provider's (its /.well-known/openid-configuration lists them); the client is registered there with the redirect
# URI https://<this host>/oidc/callback/.
OIDC_ENABLED = env_bool("OIDC_ENABLED", False)
OIDC_RP_CLIENT_ID = os.environ.get("OIDC_RP_CLIENT_ID", "")
OIDC_RP_CLIENT_SECRET = os.environ.get("OIDC_RP_CLIENT_SECRET", "")
OIDC_OP_AUTHORIZATION_ENDPOINT = os.environ.get("OIDC_OP_AUTHORIZATION_ENDPOINT", "")
OIDC_OP_TOKEN_ENDPOINT = os.environ.get("OIDC_OP_TOKEN_ENDPOINT", "")
OIDC_OP_USER_ENDPOINT = os.environ.get("OIDC_OP_USER_ENDPOINT", "")
OIDC_OP_JWKS_ENDPOINT = os.environ.get("OIDC_OP_JWKS_ENDPOINT", "")
OIDC_RP_SIGN_ALGO = os.environ.get("OIDC_RP_SIGN_ALGO", "RS256")
OIDC_RP_SCOPES = os.environ.get("OIDC_RP_SCOPES", "openid email profile")
OIDC_USE_PKCE = True
OIDC_TIMEOUT = 10
OIDC_USERNAME_CLAIM = os.environ.get("OIDC_USERNAME_CLAIM", "preferred_username")
OIDC_ROLES_CLAIM = os.environ.get("OIDC_ROLES_CLAIM", "")
OIDC_LINK_LOCAL_ACCOUNTS = env_bool("OIDC_LINK_LOCAL_ACCOUNTS", False)
LOGIN_REDIRECT_URL_FAILURE = "/accounts/login/"  # mozilla-django-oidc takes a path, not a URL name
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
# The interface's languages (docs/guides/languages.md). Arabic is laid out right to left (get_language_bidi).
LANGUAGES = [
    ("en", "English"),
    ("hi", "हिन्दी"),
    ("ar", "العربية"),
    ("es", "Español"),
    ("zh-hans", "简体中文"),
]
LOCALE_PATHS = [BASE_DIR / "locale"]
# Exports and the API write plain numbers (1234.5) in every language; only pages format for the reader.
USE_THOUSAND_SEPARATOR = False

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
# Production (DEBUG off, PostgreSQL) defaults to HTTPS everywhere, so `manage.py check --deploy` is clean with the
# compose settings; the embedded demo on http://127.0.0.1 keeps plain HTTP. PENUMBRA_HTTPS=0 is plain HTTP on
# PostgreSQL too (the tests, a trial on localhost); each setting below can still be set on its own.
_HTTPS_DEFAULT = env_bool("PENUMBRA_HTTPS", not DEBUG and not EMBEDDED)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", _HTTPS_DEFAULT)
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", _HTTPS_DEFAULT)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000 if _HTTPS_DEFAULT else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", _HTTPS_DEFAULT)
# Only a header: a domain joins browsers' preload lists when its owner submits it.
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", _HTTPS_DEFAULT)
# Behind a TLS-terminating proxy that hops to gunicorn in plain HTTP: trust X-Forwarded-Proto only when told to.
if env_bool("SECURE_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# No inline script anywhere: every script is a static file. Style attributes carry data (bar widths), so they
# are allowed; <style> elements are not (htmx's own indicator style is switched off in base.html).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "style-src-attr": ["'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

# Login throttling (django-axes): too many failures for one account, or from one address, lock it for a while.
# With Redis the counts live there and are shared by every web process; the embedded default keeps them in memory.
# Two caches: "default" holds the login-failure counts and fails open while Redis is down (config/cache.py): an
# outage pauses throttling, it does not stop logins. "sessions" must fail loudly on delete (config/sessions.py).
CACHES: dict[str, dict[str, Any]]
# A stopped (not dead) Redis accepts connections and never answers: without a socket timeout every request that
# touches it would wait for the kernel. Short timeouts make a hung Redis look like a dead one, which every cache
# user already survives (config/cache.py, config/sessions.py, config/auth.py).
REDIS_SOCKET_TIMEOUT = env_int("REDIS_SOCKET_TIMEOUT_MS", 500, minimum=50) / 1000
# After one timeout, config.redis_breaker fails this process's further calls at once for a few seconds.
_REDIS_SOCKET: dict[str, Any] = {
    "socket_timeout": REDIS_SOCKET_TIMEOUT,
    "socket_connect_timeout": REDIS_SOCKET_TIMEOUT,
}
if (_redis_url or "").startswith("redis://"):  # rediss:// keeps redis-py's TLS connection
    _REDIS_SOCKET["connection_class"] = BreakerConnection
if _redis_url:
    CACHES = {
        "default": {"BACKEND": "config.cache.FailOpenRedisCache", "LOCATION": _redis_url, "OPTIONS": _REDIS_SOCKET},
        "sessions": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": _redis_url,
            "KEY_PREFIX": "penumbra",
            # Sessions and signed-in users as JSON, never pickles (config/cache.py, config/auth.py).
            "OPTIONS": {"serializer": "config.cache.JSONSerializer", **_REDIS_SOCKET},
        },
    }
elif EMBEDDED or env_int("PENUMBRA_WEB_PROCESSES", 1, minimum=1) == 1:
    # One web process (the embedded default, `make demo`, runserver, the test suite): its memory is the one truth.
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "sessions": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "sessions"},
    }
    # axes warns about a per-process cache; the embedded default is one process, where it counts correctly.
    SILENCED_SYSTEM_CHECKS = ["axes.W001"]
else:
    # PostgreSQL without Redis and several web processes (config/gunicorn.py sets PENUMBRA_WEB_PROCESSES to its
    # worker count; a deployment of several servers sets the total): nothing that must agree between
    # them may live in one process's memory. Sessions and signed-in users are read from the database on every
    # request (a cache that holds nothing), and login-failure counts, criteria and study limits share a table in
    # PostgreSQL (created after every migrate, projects.apps): a logout or a deactivation holds at once everywhere.
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "penumbra_cache"},
        "sessions": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"},
    }
# The (account, address) pair locks after LOGIN_FAILURE_LIMIT failures; the account alone, from every address
# together, only after LOGIN_ACCOUNT_FAILURE_LIMIT (config/login_throttle.py): a guesser locks only themselves out.
AXES_HANDLER = "config.login_throttle.PairAndAccountCacheHandler"
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
LOGIN_ACCOUNT_FAILURE_LIMIT = env_int("LOGIN_ACCOUNT_FAILURE_LIMIT", 50, minimum=1)
# Past that limit the account is slowed, not locked: one attempt from an unknown device every this many seconds;
# a browser that signed in before (device cookie, this many days) is judged by its own pair count only.
LOGIN_ACCOUNT_SLOW_SECONDS = env_int("LOGIN_ACCOUNT_SLOW_SECONDS", 10, minimum=1)
LOGIN_DEVICE_COOKIE_DAYS = env_int("LOGIN_DEVICE_COOKIE_DAYS", 180, minimum=1)
AXES_COOLOFF_TIME = timedelta(seconds=env_int("LOGIN_COOLOFF_SECONDS", 900, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
# The client address behind TRUSTED_PROXY_COUNT reverse proxies (config/client_address.py); 0: the socket's.
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0)
AXES_CLIENT_IP_CALLABLE = "config.client_address.client_address"
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False

# Crowd-study abuse limits: new participants a link takes per minute, and new participants one client address
# may start per hour (returning participants are never counted).
STUDY_NEW_PARTICIPANTS_PER_LINK_PER_MINUTE = env_int("STUDY_NEW_PARTICIPANTS_PER_LINK_PER_MINUTE", 60, minimum=1)
STUDY_NEW_PARTICIPANTS_PER_ADDRESS_PER_HOUR = env_int("STUDY_NEW_PARTICIPANTS_PER_ADDRESS_PER_HOUR", 10, minimum=1)

REST_FRAMEWORK = {
    # Both refuse a study participant's token or session: participants have no API (annotation/crowd/gate.py).
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "annotation.crowd.gate.MemberTokenAuthentication",
        "annotation.crowd.gate.MemberSessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.CursorPagination",
    "PAGE_SIZE": 100,
    "EXCEPTION_HANDLER": "config.api_errors.exception_handler",
    "DEFAULT_PARSER_CLASSES": [
        "config.input_limits.SafeJSONParser",
        "config.input_limits.SafeFormParser",
        "config.input_limits.SafeMultiPartParser",
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
    # Projects and aggregates share one operator choice set: one name in the schema.
    "ENUM_NAME_OVERRIDES": {
        "AggregationOperatorEnum": "projects.models.Project.Operator",
        "HandoffRuleEnum": "projects.models.Project.HandoffRule",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.openapi.add_error_responses",
    ],
}

# Celery. Without REDIS_URL tasks run in-process (the embedded default).
CELERY_BROKER_URL = _redis_url or "memory://"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = _redis_url is None
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Celery's Django fixup closes the worker's database connections around every task unless this is set, so each task
# would open a new PostgreSQL session (a backend fork and its login: 10-25 ms of server CPU). With it set, a worker
# keeps its connection for this many tasks, and config/celery.py checks it around each task as Django does around a
# request (DB_CONN_MAX_AGE, the health check, a connection left in a failed state).
CELERY_DB_REUSE_MAX = env_int("CELERY_DB_REUSE_MAX", 1000, minimum=1)
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 300, minimum=1)
CELERY_TASK_TIME_LIMIT = CELERY_TASK_SOFT_TIME_LIMIT + 30
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_QUEUE", "penumbra")
# Background jobs (imports, exports, suggestions: minutes each) on a queue of their own when set, so a save's
# follow-ups (item and project recomputes: milliseconds) never wait behind one; a worker then serves each queue
# (`celery -A config worker -Q penumbra` and `-Q penumbra-jobs`). Unset, everything shares CELERY_QUEUE.
CELERY_JOBS_QUEUE = os.environ.get("CELERY_JOBS_QUEUE", "")
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A worker outlives a broker outage: it reconnects forever (with kombu's growing interval) instead of exiting, and
# tasks it was running are cancelled and, being acked late, delivered again once the broker is back.
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
# kombu's Redis transport with the fix that keeps the worker alive when the broker goes away while it holds
# unacknowledged messages (config/broker.py says what crashed it). rediss:// keeps kombu's own transport.
if (_redis_url or "").startswith("redis://"):
    CELERY_BROKER_TRANSPORT = "config.broker:Transport"
# A save must never fail because the broker is down: reconciliation picks the work up later.
# Messages a worker held when the broker went away return after the visibility timeout; it must outlast the longest
# countdown plus the longest hard time limit (project_recompute: 1,860 s), or a running task is delivered twice.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "visibility_timeout": 3600,
}
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
# The largest upload an import takes (page and API), in megabytes: a bigger one is refused with 413.
IMPORT_MAX_UPLOAD_MB = env_int("IMPORT_MAX_UPLOAD_MB", 2048, minimum=1)
# Project-level figures are recomputed this many seconds after the first save of a burst (debounce), or later when
# the last run was long (aggregation.dispatch.project_delay keeps project runs under a fifth of a worker's time).
AGGREGATION_PROJECT_DELAY = env_int("AGGREGATION_PROJECT_DELAY", 1)
# Embedded mode (SQLite, tasks in-process): one background thread does the recomputation, so requests never wait.
AGGREGATION_IN_THREAD = env_bool("AGGREGATION_IN_THREAD", EMBEDDED and CELERY_TASK_ALWAYS_EAGER)
REDIS_URL = _redis_url
# Who may create projects (projects.selectors.project_create_allowed): "staff" (staff and users granted "Can add
# project") or "everyone" (any signed-in account).
PROJECT_CREATORS = env_choice("PROJECT_CREATORS", "staff", ("staff", "everyone"))

# Sessions are read on every request: cached_db (config.sessions) answers from the cache and keeps the database row
# as the record, so logging out still ends a session (signed cookies could not be revoked server-side) and a Redis
# outage falls back to the database.
SESSION_ENGINE = "config.sessions"
SESSION_CACHE_ALIAS = "sessions"

# Annotation
CLAIM_SECONDS = env_int("PENUMBRA_CLAIM_SECONDS", 900, minimum=10)
# Compare every compiled hot query with the ORM's own SQL, not only the first of each shape (annotation/compiled_sql):
# the test suite turns it on so a builder that branches on a value's size cannot pass; it costs CPU on every save.
CHECK_COMPILED_SQL = env_bool("PENUMBRA_CHECK_COMPILED_SQL", False)
# The hand-made fast paths, all behind one switch: compiled hot queries (config/compiled_sql.py), the Redis
# read-ahead (config/cache_prefetch.py), the cached signed-in user (config/auth.py) and the cached criteria
# (projects/selectors.py). Off, every request takes Django's ordinary paths; CI runs the request-path tests both ways.
FAST_PATHS = env_bool("PENUMBRA_FAST_PATHS", True)

# LLM suggestions: projects may override; these are the fall-backs.
LLM_BASE_URL = os.environ.get("LLM_BASE_URL", "")
LLM_API_KEY = os.environ.get("LLM_API_KEY", "")
LLM_MODEL = os.environ.get("LLM_MODEL", "")
LLM_TIMEOUT_SECONDS = env_int("LLM_TIMEOUT_SECONDS", 60, minimum=1)
LLM_CONCURRENCY = env_int("LLM_CONCURRENCY", 4, minimum=1)
# Loopback and private addresses as LLM endpoints (a local vLLM or Ollama): on for the embedded demo, off otherwise,
# so a lead cannot aim the server at internal services. Link-local and cloud metadata addresses are always refused.
LLM_ALLOW_PRIVATE_URLS = env_bool("LLM_ALLOW_PRIVATE_URLS", EMBEDDED)
# Webhooks (projects.webhooks): receivers on loopback or private addresses only when allowed (the SSRF rule of the
# LLM endpoint); attempts per delivery and the first retry's delay, doubled each time.
WEBHOOK_ALLOW_PRIVATE_URLS = env_bool("WEBHOOK_ALLOW_PRIVATE_URLS", EMBEDDED)
WEBHOOK_MAX_ATTEMPTS = env_int("WEBHOOK_MAX_ATTEMPTS", 6, minimum=1)
WEBHOOK_BACKOFF_SECONDS = env_int("WEBHOOK_BACKOFF_SECONDS", 10)

# Mail to a project's leads (an audit that suspends a handoff). Without EMAIL_HOST it goes to the log instead.
EMAIL_HOST = os.environ.get("EMAIL_HOST", "")
EMAIL_BACKEND = os.environ.get(
    "EMAIL_BACKEND",
    "django.core.mail.backends.smtp.EmailBackend" if EMAIL_HOST else "django.core.mail.backends.console.EmailBackend",
)
EMAIL_PORT = env_int("EMAIL_PORT", 587, minimum=1)
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "penumbra@localhost")
PENUMBRA_BASE_URL = os.environ.get("PENUMBRA_BASE_URL", "").rstrip("/")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}
