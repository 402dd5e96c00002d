"""Django settings: read from the environment, with safe embedded defaults."""

import os
import secrets
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("LMIX_DATA_DIR", BASE_DIR / "data")).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)
FRONTEND_DIST = BASE_DIR / "frontend" / "dist"


def _env_bool(name: str, default: bool = False) -> bool:
    return os.environ.get(name, str(default)).strip().lower() in {"1", "true", "yes", "on"}


def _env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def _embedded_secret_key() -> str:
    """Generate the embedded secret once and keep it in the data folder (never committed)."""
    key_file = DATA_DIR / "secret_key"
    if not key_file.exists():
        key_file.write_text(secrets.token_urlsafe(50))
        key_file.chmod(0o600)
    return key_file.read_text().strip()


SECRET_KEY = os.environ.get("SECRET_KEY") or _embedded_secret_key()
# Fernet key material for API keys at rest; defaults to one derived from SECRET_KEY.
LMIX_ENCRYPTION_KEY = os.environ.get("LMIX_ENCRYPTION_KEY", "")
DEBUG = _env_bool("DEBUG")
ALLOWED_HOSTS = _env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]")
CSRF_TRUSTED_ORIGINS = _env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "lmix",
    "authoring",
    "productions",
    "synthesis",
    "config.apps.ProjectConfig",
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
]

ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "config.asgi.application"
WSGI_APPLICATION = None

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
            ]
        },
    }
]

DATABASE_URL = os.environ.get("DATABASE_URL", "")
if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=0)}
    # Each process keeps a pool of open connections (psycopg_pool): a request or a task
    # borrows one instead of starting a PostgreSQL backend (a few ms, cold caches) and
    # gives it back when Django closes it. Persistent connections are not for ASGI.
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": int(os.environ.get("LMIX_DB_POOL_MIN", "2")),
        "max_size": int(os.environ.get("LMIX_DB_POOL_MAX", "20")),
        "timeout": float(os.environ.get("LMIX_DB_POOL_TIMEOUT", "10")),
    }
    # Statements are bound on the server and prepared once a connection has run them
    # twice, so PostgreSQL plans them once: planning the medium pass's read of a pass with
    # its frame (nine tables) took 2-3 ms every time. A pooler in transaction mode
    # (PgBouncer before 1.21) cannot keep prepared statements: LMIX_DB_PREPARE=0 there.
    if os.environ.get("LMIX_DB_PREPARE", "1") != "0":
        DATABASES["default"]["OPTIONS"] |= {"server_side_binding": True, "prepare_threshold": 2}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": DATA_DIR / "lmix.sqlite3",
            "TEST": {"NAME": DATA_DIR / "test.sqlite3"},
        }
    }
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Workers write from threads (and processes): WAL plus immediate transactions turn
    # lock contention into short waits instead of "database is locked".
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 30,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = DATA_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)
STATICFILES_DIRS = [FRONTEND_DIST] if FRONTEND_DIST.exists() else []
WHITENOISE_USE_FINDERS = True
# Uploads (persona avatars), served by config/spa.py::media under /media/.
MEDIA_URL = "/media/"
MEDIA_ROOT = DATA_DIR / "media"

SESSION_ENGINE = "lmix.sessions"
# Django's model backend, reading the signed-in user with a query built once.
AUTHENTICATION_BACKENDS = ["lmix.authentication.UserBackend"]
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_SECURE = _env_bool("SECURE_COOKIES")
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE

REDIS_URL = os.environ.get("REDIS_URL", "")
if REDIS_URL:
    # Pub/sub: one PUBLISH per group event whatever the group's size, fanned out in each
    # daphne process (tests/bench/fanout.py; docs/realtime.md). LMIX_CHANNEL_LAYER=core
    # selects channels_redis's list-based layer, kept for comparison benches.
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": {
                "pubsub": "channels_redis.pubsub.RedisPubSubChannelLayer",
                "core": "channels_redis.core.RedisChannelLayer",
            }[os.environ.get("LMIX_CHANNEL_LAYER", "pubsub")],
            "CONFIG": {
                "hosts": [
                    {
                        "address": REDIS_URL,
                        # redis-py 8 gives every read a 5 s timeout by default, and the
                        # core layer's idle read blocks 5 s in BZPOPMIN, so idle sockets
                        # died with 1011 (channels_redis#422). Reads outlast any blocking
                        # command; keepalive still finds a dead connection.
                        "socket_timeout": 15,
                        "socket_connect_timeout": 5,
                        "socket_keepalive": True,
                    }
                ],
                "prefix": os.environ.get("LMIX_CHANNEL_PREFIX", "lmix"),
            },
        }
    }
else:
    # A GM's socket hears every seat's stream: room for bursts beyond the default 100
    # messages waiting per socket, past which the in-memory layer drops them.
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels.layers.InMemoryChannelLayer",
            "CONFIG": {"capacity": 2000},
        }
    }

# Websocket limits (docs/realtime.md, "Limits"). A socket whose client reads too slowly is
# closed with 4408 once this many bytes, or messages, wait in the web process for the
# kernel to take them; the client reconnects and re-reads over REST.
LMIX_SOCKET_MAX_QUEUED_BYTES = int(os.environ.get("LMIX_SOCKET_MAX_QUEUED_BYTES", "1048576"))
LMIX_SOCKET_MAX_QUEUED_MESSAGES = int(os.environ.get("LMIX_SOCKET_MAX_QUEUED_MESSAGES", "1000"))
# A client's message over this many bytes gets an error frame and close 1009.
LMIX_SOCKET_MAX_MESSAGE_BYTES = int(os.environ.get("LMIX_SOCKET_MAX_MESSAGE_BYTES", "65536"))
# Seconds daphne waits for a socket's handshake (the session and frame reads on a busy
# host) before it drops the connection; daphne's own default, 5, dropped tabs opened at once
# on a loaded 2-core host.
LMIX_SOCKET_HANDSHAKE_SECONDS = float(os.environ.get("LMIX_SOCKET_HANDSHAKE_SECONDS", "20"))
# Sockets one user may hold on one page (a frame, a production) per web process; more
# are refused with 4429 (tabs beyond it retry with backoff).
LMIX_SOCKETS_PER_USER_PER_FRAME = int(os.environ.get("LMIX_SOCKETS_PER_USER_PER_FRAME", "8"))
# Typing presence ("vapor") one socket publishes per second at most; what a client sends
# faster is coalesced into its latest state, published when the interval ends.
LMIX_VAPOR_PER_SECOND = float(os.environ.get("LMIX_VAPOR_PER_SECOND", "2"))

# The cache holds the login and signup throttles' counts (lmix/throttles.py): on Redis every
# web process shares them; in local memory each process counts on its own.
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "lmix-cache",
            "OPTIONS": {"socket_connect_timeout": 5, "socket_timeout": 5},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# Login and signup throttles: "<count>/<s|min|hour|day>". Failed logins count per username
# (case-folded) and per address; every signup attempt counts per address.
LMIX_LOGIN_RATE_PER_USERNAME = os.environ.get("LMIX_LOGIN_RATE_PER_USERNAME", "10/min")
LMIX_LOGIN_RATE_PER_ADDRESS = os.environ.get("LMIX_LOGIN_RATE_PER_ADDRESS", "30/min")
LMIX_SIGNUP_RATE_PER_ADDRESS = os.environ.get("LMIX_SIGNUP_RATE_PER_ADDRESS", "60/hour")
# Reverse proxies in front that append the client's address to X-Forwarded-For; 0 counts
# per connecting address. Set it behind a proxy, or every client shares the proxy's count.
LMIX_TRUSTED_PROXY_COUNT = int(os.environ.get("LMIX_TRUSTED_PROXY_COUNT", "0"))
# Play limits (docs/security.md "Play limits"), rates as above. A player's intentions: each
# submit or edit costs a model call (its soft pass) and an event to every socket of the
# frame. Submits per seat, edits per seat, both together per user (all seats and frames),
# and submitted, uncommitted intentions a seat may hold (409 past it; 0: no cap).
# Assistants are held by their own limits (LMIX_AI_ACTIONS_*), not these.
LMIX_LIQUID_RATE_PER_SEAT = os.environ.get("LMIX_LIQUID_RATE_PER_SEAT", "10/min")
LMIX_LIQUID_EDIT_RATE_PER_SEAT = os.environ.get("LMIX_LIQUID_EDIT_RATE_PER_SEAT", "20/min")
LMIX_LIQUID_RATE_PER_USER = os.environ.get("LMIX_LIQUID_RATE_PER_USER", "30/min")
LMIX_PENDING_LIQUID_PER_SEAT = int(os.environ.get("LMIX_PENDING_LIQUID_PER_SEAT", "5"))
# Invite previews, joins and spectator-link lookups (all count), per user and per address.
LMIX_CODE_LOOKUP_RATE_PER_USER = os.environ.get("LMIX_CODE_LOOKUP_RATE_PER_USER", "60/min")
LMIX_CODE_LOOKUP_RATE_PER_ADDRESS = os.environ.get("LMIX_CODE_LOOKUP_RATE_PER_ADDRESS", "300/min")

CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", REDIS_URL or "memory://localhost/")
if CELERY_BROKER_URL.startswith("memory://"):
    # kombu polls the in-memory queue, once a second by default: every task (a turn, a
    # window, a pass) would wait up to a second to start (tests/bench/frames.py).
    CELERY_BROKER_TRANSPORT_OPTIONS = {"polling_interval": 0.01}
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Two queues (docs/tasks.md): "short" work takes milliseconds to seconds (soft passes,
# bones, windows, sweeps) and must never wait behind a model stream; "streams" (narratives,
# turns, drafts, AI seats' actions, epilogues) hold their call for the whole answer, so
# their worker runs many at once (LMIX_STREAM_CONCURRENCY threads, each idle on its socket).
CELERY_TASK_DEFAULT_QUEUE = "short"
STREAM_TASKS = [
    "synthesis.tasks.flesh_task",
    "synthesis.tasks.ai_act_task",
    "synthesis.tasks.epilogue_task",
    "synthesis.tasks.state_pass_task",  # a model call after each outcome, never in its way
    "synthesis.tasks.significance_pass_task",  # and one after it, weighing its memories
    "synthesis.tasks.turn_state_pass_task",  # and after each production turn
    "synthesis.tasks.scene_summary_task",  # a closed scene's summaries (synthesis/scenes/)
    "productions.tasks.turn_generate_task",
    "productions.tasks.draft_generate_task",
]
CELERY_TASK_ROUTES = {name: {"queue": "streams"} for name in STREAM_TASKS}
LMIX_SHORT_CONCURRENCY = int(os.environ.get("LMIX_SHORT_CONCURRENCY", "4"))
LMIX_STREAM_CONCURRENCY = int(os.environ.get("LMIX_STREAM_CONCURRENCY", "256"))
# How long a queued task's marker is trusted: a sweep enqueues work again only when its
# marker is gone (lmix/realtime/queued.py), so a backlog is never multiplied.
LMIX_QUEUED_TRUST_SECONDS = float(os.environ.get("LMIX_QUEUED_TRUST_SECONDS", "300"))

# Leases and sweeps (docs/tasks.md). A running generation renews its lease every
# LMIX_LEASE_HEARTBEAT_SECONDS; one silent for LMIX_LEASE_TIMEOUT_SECONDS has lost its
# worker and runs again from the start, at most LMIX_LEASE_MAX_RESTARTS times.
LMIX_LEASE_HEARTBEAT_SECONDS = float(os.environ.get("LMIX_LEASE_HEARTBEAT_SECONDS", "5"))
LMIX_LEASE_TIMEOUT_SECONDS = float(os.environ.get("LMIX_LEASE_TIMEOUT_SECONDS", "20"))
LMIX_LEASE_MAX_RESTARTS = int(os.environ.get("LMIX_LEASE_MAX_RESTARTS", "2"))
# Pending work whose task has not started after this long, and is not marked as queued
# (lmix/realtime/queued.py), is enqueued again.
LMIX_PENDING_REQUEUE_SECONDS = float(os.environ.get("LMIX_PENDING_REQUEUE_SECONDS", "30"))
# Streamed text is written to the database at most this often (and at the end): only a
# reader who loads mid-stream reads it. Every 250 ms, the checkpoints of 100 streams took
# most of a core of the streams worker (tests/bench/streams.py); once a second, a quarter.
LMIX_STREAM_CHECKPOINT_SECONDS = float(os.environ.get("LMIX_STREAM_CHECKPOINT_SECONDS", "1"))
# After a stream's first delta, what arrives this close together goes to readers as one
# delta: a fast provider's hundreds of deltas a second become at most 1 / this messages.
LMIX_STREAM_BATCH_SECONDS = float(os.environ.get("LMIX_STREAM_BATCH_SECONDS", "0.05"))
# Every worker and web process runs the sweeps itself (lmix/realtime/sweeper.py), so lost
# work is found without beat; beat, where it runs, only adds another runner.
LMIX_SWEEPER = _env_bool("LMIX_SWEEPER", True)
SWEEP_INTERVAL_SECONDS = float(os.environ.get("SWEEP_INTERVAL_SECONDS", "2"))
# AI seats act at most this often, so AI characters never loop on their own.
LMIX_AI_ACTIONS_PER_HUMAN_ACTION = int(os.environ.get("LMIX_AI_ACTIONS_PER_HUMAN_ACTION", "2"))
LMIX_AI_ACTIONS_PER_MINUTE = int(os.environ.get("LMIX_AI_ACTIONS_PER_MINUTE", "6"))
# A frame's model budget per rolling minute, every call it makes counted (soft, bones,
# flesh, AI seats, interrupts; 0: no limit). AI and interrupt work is admitted only below
# LMIX_FRAME_BACKGROUND_SHARE of it; players' work waits at the full limits, never lost
# (docs/synthesis.md, "Budgets"). 8 players committing every 15 s use ~130 calls, ~400k tokens.
LMIX_FRAME_MODEL_CALLS_PER_MINUTE = int(os.environ.get("LMIX_FRAME_MODEL_CALLS_PER_MINUTE", "240"))
LMIX_FRAME_MODEL_TOKENS_PER_MINUTE = int(
    os.environ.get("LMIX_FRAME_MODEL_TOKENS_PER_MINUTE", "1000000")
)
LMIX_FRAME_BACKGROUND_SHARE = float(os.environ.get("LMIX_FRAME_BACKGROUND_SHARE", "0.5"))
# Which budget a model call counts against, from its subject (lmix/llm/meter.py).
LMIX_LLM_BUDGET_KEY = "synthesis.budget.budget_key_for"
# Frame windows are due to the second: their backstop sweep runs about every second.
FRAMES_SWEEP_INTERVAL_SECONDS = float(os.environ.get("FRAMES_SWEEP_INTERVAL_SECONDS", "1"))
# Every live frame that changed is snapshotted this often, in minutes (0: never), keeping
# its newest LMIX_FRAME_SNAPSHOT_KEEP (synthesis/snapshots/). Beat runs it: services mode
# (REDIS_URL set) snapshots every 30 minutes unless told otherwise; embedded has no beat.
LMIX_FRAME_SNAPSHOT_EVERY = float(
    os.environ.get("LMIX_FRAME_SNAPSHOT_EVERY", "30" if REDIS_URL else "0")
)
LMIX_FRAME_SNAPSHOT_KEEP = int(os.environ.get("LMIX_FRAME_SNAPSHOT_KEEP", "24"))
CELERY_BEAT_SCHEDULE = {
    # Every kind of leased work (docs/tasks.md, "The jobs").
    "jobs-sweep": {
        "task": "lmix.tasks.jobs_sweep_task",
        "schedule": SWEEP_INTERVAL_SECONDS,
    },
    # Windows that expired (timers, to the second).
    "frames-sweep": {
        "task": "synthesis.tasks.frames_sweep_task",
        "schedule": FRAMES_SWEEP_INTERVAL_SECONDS,
    },
}
if LMIX_FRAME_SNAPSHOT_EVERY > 0:
    CELERY_BEAT_SCHEDULE["frames-snapshot"] = {
        "task": "synthesis.tasks.frames_snapshot_task",
        "schedule": LMIX_FRAME_SNAPSHOT_EVERY * 60,
    }

# The medium pass (synthesis/medium/): how many earlier outcomes and own narratives a
# character's prompt holds, and how many times its bones are computed again when another
# outcome of the frame lands first (the last try holds the frame's lock across the call).
LMIX_MEDIUM_OUTCOMES_CONTEXT = int(os.environ.get("LMIX_MEDIUM_OUTCOMES_CONTEXT", "12"))
LMIX_MEDIUM_NARRATIVES_CONTEXT = int(os.environ.get("LMIX_MEDIUM_NARRATIVES_CONTEXT", "3"))
LMIX_MEDIUM_BONES_ATTEMPTS = int(os.environ.get("LMIX_MEDIUM_BONES_ATTEMPTS", "3"))
# After each outcome, a queued state pass updates its witnesses' relationships, mood,
# learned facts and memories (synthesis/state/): one model call per outcome.
LMIX_STATE_PASSES = _env_bool("LMIX_STATE_PASSES", True)
# Scenes (synthesis/scenes/): an outcome after this long without one opens a new scene
# (0: never); prompts carry the summaries of this many older scenes.
LMIX_SCENE_PAUSE_MINUTES = float(os.environ.get("LMIX_SCENE_PAUSE_MINUTES", "30"))
LMIX_SCENE_SUMMARIES_CONTEXT = int(os.environ.get("LMIX_SCENE_SUMMARIES_CONTEXT", "3"))

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["lmix.authentication.SessionAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # DRF's JSON parser, refusing too-deep nesting and lone surrogates with a 400.
    "DEFAULT_PARSER_CLASSES": ["lmix.parsers.StrictJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "config.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "lmix.errors.api_exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
# The deepest nesting of arrays/objects a JSON request body may have (lmix/parsers.py).
LMIX_JSON_MAX_DEPTH = int(os.environ.get("LMIX_JSON_MAX_DEPTH", "32"))

SPECTACULAR_SETTINGS = {
    "TITLE": "LMiX API",
    "DESCRIPTION": "Authoring, productions and realtime play for LMiX.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # pydantic (synthesis/answers.py) writes JSON Schema 2020-12, as OpenAPI 3.1 does.
    "OAS_VERSION": "3.1.0",
    # One named enum per set of choices, shared by the serializers and the pydantic answers
    # (synthesis/answers.py) that use it: the generated TypeScript names them once.
    "ENUM_NAME_OVERRIDES": {
        "FrameStatus": "synthesis.models.FrameStatus",
        "FrameMode": "synthesis.models.FrameMode",
        "LiquidVisibility": "synthesis.models.LiquidVisibility",
        "LeakGuard": "synthesis.models.LeakGuard",
        "SeatController": "synthesis.models.SeatController",
        "AiReacts": "synthesis.models.AiReacts",
        "Face": "synthesis.models.Face",
        "SkillScope": "synthesis.models.SkillScope",
        "LiquidStatus": "synthesis.models.LiquidStatus",
        "WindowStatus": "synthesis.models.WindowStatus",
        "PassKind": "synthesis.models.PassKind",
        "PassStatus": "synthesis.models.PassStatus",
        "NarrativeStatus": "synthesis.models.NarrativeStatus",
        "SceneStatus": "synthesis.scene_models.SceneStatus",
        "SummaryStatus": "synthesis.scene_models.SummaryStatus",
        "TurnStatus": "productions.models.TurnStatus",
        "SpeakerKind": "productions.models.SpeakerKind",
        "LoreLayer": "authoring.models.LoreLayer",
        "Provider": "lmix.models.Provider",
    },
    "POSTPROCESSING_HOOKS": [
        "config.openapi.pydantic_enum_ids",
        "drf_spectacular.hooks.postprocess_schema_enums",
    ],
}

# LLM calls (docs/providers.md "Timeouts and retries"): seconds for a whole answer that is
# not streamed, to connect, for a stream's first text (CPU servers read long prompts
# slowly) and between its pieces; retries on 429/5xx/dropped connections (a timeout or an
# empty answer is tried again once).
LLM_TIMEOUT_SECONDS = float(os.environ.get("LLM_TIMEOUT_SECONDS", "60"))
LLM_CONNECT_TIMEOUT_SECONDS = float(os.environ.get("LLM_CONNECT_TIMEOUT_SECONDS", "10"))
LLM_FIRST_TOKEN_TIMEOUT_SECONDS = float(os.environ.get("LLM_FIRST_TOKEN_TIMEOUT_SECONDS", "120"))
LLM_BETWEEN_TOKENS_TIMEOUT_SECONDS = float(
    os.environ.get("LLM_BETWEEN_TOKENS_TIMEOUT_SECONDS", "30")
)
LLM_MAX_RETRIES = int(os.environ.get("LLM_MAX_RETRIES", "2"))
# Requests at once to a model server on a local network that says nothing of its slots
# (a llama.cpp server reports them; a model's `concurrency` setting wins; 0: no limit):
# lmix/llm/slots.py. Hosted APIs are not limited.
LMIX_LOCAL_MODEL_SLOTS = int(os.environ.get("LMIX_LOCAL_MODEL_SLOTS", "1"))
# The answer budget of a structured call when neither its caller nor the model sets one.
LLM_STRUCTURED_MAX_TOKENS = int(os.environ.get("LLM_STRUCTURED_MAX_TOKENS", "1024"))
# Seconds between the offline narrator's streamed pieces, so its text visibly streams.
LMIX_OFFLINE_STREAM_DELAY = float(os.environ.get("LMIX_OFFLINE_STREAM_DELAY", "0.04"))
LLM_TEST_TIMEOUT_SECONDS = float(os.environ.get("LLM_TEST_TIMEOUT_SECONDS", "10"))
# What model endpoints may reach: words (public, private, loopback), networks and host
# names, comma-separated; docs/security.md "Endpoint policy". Embedded mode (the in-memory
# broker of `make run`) also reaches this machine, so a local Ollama works out of the box.
LMIX_LLM_ALLOWED_NETWORKS = _env_list(
    "LMIX_LLM_ALLOWED_NETWORKS",
    "public,loopback" if CELERY_BROKER_URL.startswith("memory://") else "public",
)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "httpx": {"level": "WARNING"},
        "httpx2": {"level": "WARNING"},
        "daphne": {"level": "WARNING"},
        "celery": {"level": "WARNING"},
    },
}
SPECTACULAR_SETTINGS.update(
    {
        "SWAGGER_UI_DIST": "SIDECAR",
        "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
        "REDOC_DIST": "SIDECAR",
    }
)
