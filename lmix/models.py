"""What every app shares: owned rows, LLM models (endpoints, keys, parameters) and the
record of every LLM call."""

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from . import crypto

NAME_MAX = 200
TEXT_MAX = 20_000
URL_MAX = 2_000

OFFLINE_ENDPOINT = "offline://narrator"


class Provider(models.TextChoices):
    OPENAI = "openai", "OpenAI"
    OPENAI_COMPATIBLE = "openai_compatible", "OpenAI-compatible"
    OLLAMA = "ollama", "Ollama"
    ANTHROPIC = "anthropic", "Anthropic"
    OFFLINE = "offline", "Offline narrator"


class JobStatus(models.TextChoices):
    """A background job's status (lmix/realtime/leases.py), where it has no lifecycle of
    its own."""

    PENDING = "pending"  # its task enqueued (or lost: the sweep sends it again)
    RUNNING = "running"  # a worker holds its lease
    DONE = "done"
    FAILED = "failed"


# Claimed, then ended once; back to pending when its worker's lease lapsed.
JOB_TRANSITIONS: dict[str, set[str]] = {
    JobStatus.PENDING: {JobStatus.RUNNING},
    JobStatus.RUNNING: {JobStatus.PENDING, JobStatus.DONE, JobStatus.FAILED},
    JobStatus.DONE: set(),
    JobStatus.FAILED: set(),
}


class Leased(models.Model):
    """A row a worker claims under a lease (lmix/realtime/leases.py): who holds it, its
    last heartbeat, and the runs started."""

    lease_owner = models.CharField(max_length=200, blank=True, default="")
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)

    class Meta:
        abstract = True


class Owned(models.Model):
    """Every authoring object belongs to one user, who alone may see it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True
        ordering = ["-created_at"]


class LLMModel(Owned):
    """An LLM configuration: where to call, with which key, which model id and defaults."""

    name = models.CharField(max_length=NAME_MAX)
    provider = models.CharField(max_length=32, choices=Provider.choices)
    api_endpoint = models.CharField(max_length=URL_MAX)
    api_key_encrypted = models.TextField(blank=True, default="")
    model_id = models.CharField(max_length=NAME_MAX)
    config = models.JSONField(default=dict, blank=True)
    is_default = models.BooleanField(default=False)

    class Meta(Owned.Meta):
        verbose_name = "LLM model"
        constraints = [
            models.UniqueConstraint(
                fields=["owner"], condition=Q(is_default=True), name="one_default_model_per_user"
            ),
            # One endpoint and model id may be added many times (other parameters), told
            # apart by name.
            models.UniqueConstraint(fields=["owner", "name"], name="unique_model_name"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def api_key(self) -> str:
        """The decrypted key; "" when none is stored.

        Raises:
            crypto.UnreadableSecret: a key is stored but no longer decrypts (the server's
                encryption key changed); its owner has to enter it again.
        """
        return crypto.decrypt(self.api_key_encrypted)

    @api_key.setter
    def api_key(self, value: str) -> None:
        self.api_key_encrypted = crypto.encrypt(value or "")

    @property
    def has_api_key(self) -> bool:
        """Whether a key is stored, readable or not."""
        return bool(self.api_key_encrypted)

    @property
    def key_unreadable(self) -> bool:
        """Whether a key is stored that no longer decrypts."""
        return not crypto.is_readable(self.api_key_encrypted)


class LLMCall(models.Model):
    """One recorded provider call, for cost and failure diagnostics."""

    id = models.BigAutoField(primary_key=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    llm_model = models.ForeignKey(
        LLMModel, null=True, blank=True, on_delete=models.SET_NULL, related_name="calls"
    )
    provider = models.CharField(max_length=32)
    model_id = models.CharField(max_length=NAME_MAX)
    purpose = models.CharField(max_length=64)
    # What the call was for, when it belongs to a record: "pass:<id>" for a frame's pass.
    subject = models.CharField(max_length=64, blank=True, default="", db_index=True)
    kind = models.CharField(max_length=16)  # complete / stream / structured / list_models
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True, default="")
    # The parameters the call was made with (validated, before a provider drops any).
    params = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Empty while the call runs (and forever for a call cut off by a dead worker).
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "LLM call"

    def __str__(self) -> str:
        return f"{self.purpose} on {self.model_id}"
