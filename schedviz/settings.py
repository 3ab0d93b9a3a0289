"""Django settings for schedviz, all from the environment (documented in README.md).

Embedded mode (the default): SQLite under var/, the channel layer in memory, Celery tasks run in
the calling process. Distributed mode: DATABASE_URL (PostgreSQL) and REDIS_URL set.
"""

from __future__ import annotations

import secrets
import warnings
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from schedviz.env import envbool, envhostports, envint, envorigins, envstr

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(envstr("SCHEDVIZ_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = envbool("DJANGO_DEBUG", False)
# No secret is built in: without DJANGO_SECRET_KEY each process makes its own, which is fine
# for one embedded process and means sessions do not survive a restart. Deployments with several
# processes set SCHEDVIZ_REQUIRE_SECRET_KEY so that a forgotten key stops the start instead.
SECRET_KEY = envstr("DJANGO_SECRET_KEY")
if not SECRET_KEY and envbool("SCHEDVIZ_REQUIRE_SECRET_KEY", False):
    raise ImproperlyConfigured("SCHEDVIZ_REQUIRE_SECRET_KEY is on but DJANGO_SECRET_KEY is unset")
SECRET_KEY = SECRET_KEY or secrets.token_urlsafe(50)
ALLOWED_HOSTS = [
    h for h in envstr("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]").split(",") if h
]

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "template_partials",
    "schedviz.cluster",
    "schedviz.compare",
    "webui",
    "worker",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Static files from STATIC_ROOT (collectstatic), by the app itself: no separate web server.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "schedviz.urls"

# Sign in and out (Django's auth views); accounts are made by an administrator, not by sign-up.
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "webui:index"
LOGOUT_REDIRECT_URL = "webui:index"
ASGI_APPLICATION = "schedviz.asgi.application"
WSGI_APPLICATION = "schedviz.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
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

DATABASE_URL = envstr("DATABASE_URL")
DATABASES = {
    "default": dj_database_url.parse(DATABASE_URL, conn_max_age=60)
    if DATABASE_URL
    else {
        "ENGINE": "schedviz.sqlite",
        "NAME": VAR_DIR / "db.sqlite3",
        # The runner thread and the web requests write the same file. IMMEDIATE takes the write
        # lock when a transaction begins, so a writer waits (up to the timeout) instead of
        # failing at once with "database is locked" when it upgrades a read lock; this process's
        # writers wait their turn on a lock of the backend (schedviz/sqlite), other processes'
        # in SQLite's busy handler. WAL lets readers go on while one writes.
        "OPTIONS": {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        },
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = envstr("REDIS_URL")
# channels_redis receives with a blocking pop that Redis answers after 5 s when nothing came
# (RedisChannelLayer.brpop_timeout); redis-py 8 gives up reading after 5 s by default, so an idle
# websocket lost that race every few seconds and was closed with 1011. The socket timeout is
# longer than the blocking pop, so an idle receive ends with Redis' empty answer and starts again,
# for as long as the websocket stays open; a Redis that stops answering is still noticed.
CHANNEL_REDIS_SOCKET_TIMEOUT = 15.0
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {
            "hosts": [
                {
                    "address": REDIS_URL,
                    "socket_timeout": CHANNEL_REDIS_SOCKET_TIMEOUT,
                    "socket_connect_timeout": 5.0,
                    "socket_keepalive": True,
                }
            ]
        },
    }
    if REDIS_URL
    else {"BACKEND": "channels.layers.InMemoryChannelLayer"}
}

CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = REDIS_URL or None
# Embedded mode runs tasks in the calling process; there is no broker to send them to.
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Nothing reads a task's return value from Redis (the runner's outcome is in the database): no
# result keys are written (a caller that wants one asks with apply_async(ignore_result=False)),
# and any that are expire after ten minutes instead of piling up.
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_EXPIRES = 600

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
# `manage.py collectstatic` copies the apps' static files here (the Dockerfile does so, with
# SCHEDVIZ_STATIC_MANIFEST=true); WhiteNoise serves them with compressed variants. Collected with
# the manifest, their names carry a hash of their content (htmx-2.min.<hash>.js), which WhiteNoise
# serves with a cache of a year; a process finds the manifest (staticfiles.json) and links those
# names. Without collected files (the embedded server, the tests) the apps' files are served under
# their own names, with a short cache.
STATIC_ROOT = VAR_DIR / "static"
STATIC_MANIFEST = envbool("SCHEDVIZ_STATIC_MANIFEST", (STATIC_ROOT / "staticfiles.json").is_file())
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if STATIC_MANIFEST
        else "whitenoise.storage.CompressedStaticFilesStorage"
    },
}
# Without collected files (the embedded server, the tests) WhiteNoise reads the apps' static
# folders instead, and need not warn that STATIC_ROOT is missing.
WHITENOISE_USE_FINDERS = not STATIC_ROOT.is_dir()
if WHITENOISE_USE_FINDERS:
    warnings.filterwarnings("ignore", message="No directory at", category=UserWarning)

# The random seed of the scheduler's tie-breaks when a run does not choose one.
SCHEDVIZ_DEFAULT_SEED = envint("SCHEDVIZ_DEFAULT_SEED", 1, minimum=0)
# Whether a committed change to a cluster starts its runner (worker.dispatch.ensure_runner);
# off for processes that only serve pages while other processes schedule, and in tests.
SCHEDVIZ_START_RUNNERS = envbool("SCHEDVIZ_START_RUNNERS", True)
# A runner gives its cluster up after this many seconds with nothing to do now (no poppable pod,
# no new change, nothing due sooner); it saves its queue and is started again by the next change
# or when its next backoff expiry or queue flush falls due.
SCHEDVIZ_RUNNER_IDLE_SECONDS = envint("SCHEDVIZ_RUNNER_IDLE_SECONDS", 1, minimum=0)
# A cycle held in the step debugger is given up after this long without a command.
SCHEDVIZ_DEBUG_WAIT_SECONDS = envint("SCHEDVIZ_DEBUG_WAIT_SECONDS", 3600, minimum=1)
# How often `celery beat` looks for clusters whose runner died holding the lease, and starts one.
SCHEDVIZ_RESUME_SECONDS = envint("SCHEDVIZ_RESUME_SECONDS", 15, minimum=1)
# How often `celery beat` looks for expired leases held by a runner that died, hangs or is cut
# off, and for overdue wake-ups (two small reads), and starts a runner for each.
SCHEDVIZ_TAKEOVER_SECONDS = envint("SCHEDVIZ_TAKEOVER_SECONDS", 2, minimum=1)
CELERY_BEAT_SCHEDULE = {
    "resume-orphaned-clusters": {
        "task": "worker.tasks.resume_orphaned_clusters",
        "schedule": float(SCHEDVIZ_RESUME_SECONDS),
    },
    "take-over-expired-leases": {
        "task": "worker.tasks.take_over_expired_leases",
        "schedule": float(SCHEDVIZ_TAKEOVER_SECONDS),
    },
}
# The host:port pairs scheduler extenders (KubeSchedulerConfiguration `extenders`) may be called
# on, comma separated ("127.0.0.1:8888,[::1]:8888"): the scheduler refuses an extender URL
# anywhere else, so that a configuration cannot make the server send requests into networks or
# to services it can reach (server-side request forgery: the database, Redis, its own admin).
# None by default: extenders are refused until the operator names the ones that run.
SCHEDVIZ_EXTENDER_ALLOWED_HOSTS = envhostports("SCHEDVIZ_EXTENDER_ALLOWED_HOSTS")
# The largest request body the JSON API reads (manifests to apply), in bytes; larger ones get 413.
SCHEDVIZ_MAX_UPLOAD_BYTES = envint("SCHEDVIZ_MAX_UPLOAD_BYTES", 10 * 1024 * 1024, minimum=1)
# The pages' YAML forms refuse more than that with a form error. Django's own cap on a request's
# form fields (2.5 MB by default, a bare 400 past it) leaves room for such a paste form-encoded,
# which may take three bytes for one (%XX).
DATA_UPLOAD_MAX_MEMORY_SIZE = 3 * SCHEDVIZ_MAX_UPLOAD_BYTES + 64 * 1024
# Per cluster limits (services refuse an apply that would pass them, and save nothing), and how
# many scheduling cycle traces a cluster keeps: beyond it the oldest are deleted as new ones come.
SCHEDVIZ_MAX_NODES_PER_CLUSTER = envint("SCHEDVIZ_MAX_NODES_PER_CLUSTER", 10_000, minimum=0)
SCHEDVIZ_MAX_PODS_PER_CLUSTER = envint("SCHEDVIZ_MAX_PODS_PER_CLUSTER", 50_000, minimum=0)
SCHEDVIZ_MAX_CYCLES_KEPT = envint("SCHEDVIZ_MAX_CYCLES_KEPT", 100_000, minimum=1)
# Objects (documents and List items) one apply from the API or a form may hold. The loader counts
# them, and the nodes and pods against the limits above, while it reads, and refuses the input
# at the first one past a limit instead of decoding it all first.
SCHEDVIZ_MAX_OBJECTS_PER_APPLY = envint("SCHEDVIZ_MAX_OBJECTS_PER_APPLY", 60_000, minimum=1)
# Writes (POST, PUT, PATCH, DELETE) of the JSON API each user (each address when anonymous) may
# make per minute, in bursts of up to as many; more are answered 429 with Retry-After. 0: no limit.
SCHEDVIZ_WRITE_RATE_PER_MINUTE = envint("SCHEDVIZ_WRITE_RATE_PER_MINUTE", 120, minimum=0)

# The rate limiter's counters: in this process by default; in Redis, shared by every process,
# in distributed mode. A Redis that does not answer within the timeouts makes writes 503
# (schedviz/cluster/ratelimit.py) rather than hang.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "schedviz",
        "OPTIONS": {"socket_connect_timeout": 2.0, "socket_timeout": 2.0},
    }
    if REDIS_URL
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
}

# HTTPS. Off by default, so that the embedded server works over plain http on a laptop. On
# (SCHEDVIZ_HTTPS=true) when browsers reach the site over https, directly or through a proxy that
# terminates TLS: http is redirected to https, cookies are sent over https only, and browsers are
# told by HSTS to use https only for SCHEDVIZ_HSTS_SECONDS (and for subdomains).
SCHEDVIZ_HTTPS = envbool("SCHEDVIZ_HTTPS", False)
SECURE_SSL_REDIRECT = SCHEDVIZ_HTTPS
SESSION_COOKIE_SECURE = SCHEDVIZ_HTTPS
CSRF_COOKIE_SECURE = SCHEDVIZ_HTTPS
SECURE_HSTS_SECONDS = envint(
    "SCHEDVIZ_HSTS_SECONDS", 365 * 24 * 3600 if SCHEDVIZ_HTTPS else 0, minimum=0
)
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SCHEDVIZ_HSTS_INCLUDE_SUBDOMAINS", SCHEDVIZ_HTTPS)
# Asking to be put on the browsers' built-in HSTS list is the domain owner's decision (and hard
# to undo), so it is never made by default, and Django's reminder about it is silenced.
SECURE_HSTS_PRELOAD = envbool("SCHEDVIZ_HSTS_PRELOAD", False)
SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]
# Behind a proxy that terminates TLS, the proxy's X-Forwarded-Proto says whether the browser used
# https. Only set this when the proxy always sets (or strips) the header: a client could forge it.
if envbool("SCHEDVIZ_TRUST_X_FORWARDED_PROTO", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Origins (scheme://host[:port], comma separated) that may send forms and API writes besides the
# site's own, e.g. the public https address when a proxy rewrites the Host header.
# Browsers' websockets are accepted from the site's own origin (scheme, host and port as the
# handshake reached the server) and from these, compared whole (webui/ws_auth.py).
CSRF_TRUSTED_ORIGINS = envorigins("SCHEDVIZ_CSRF_TRUSTED_ORIGINS")

# /metrics lists every cluster's figures. With a token, only `Authorization: Bearer <token>`
# scrapes it (as kube-scheduler's own /metrics needs credentials); without one, only callers on
# the loopback interface, e.g. a Prometheus beside the server.
SCHEDVIZ_METRICS_TOKEN = envstr("SCHEDVIZ_METRICS_TOKEN")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": envstr("SCHEDVIZ_LOG_LEVEL", "INFO")},
}
