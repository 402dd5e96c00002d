"""Encryption at rest for API keys (Fernet with a key derived from settings).

The key material is LMIX_ENCRYPTION_KEY, or SECRET_KEY when that is empty. A stored key
encrypted under other material (SECRET_KEY changed) no longer decrypts: `decrypt` raises
UnreadableSecret rather than passing it off as "no key"; lmix/checks.py counts such keys
at startup. docs/security.md ("Unreadable keys") says what to do about them.
"""

import base64
import hashlib
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings

from .errors import ApplicationError

UNREADABLE_MESSAGE = (
    "This model's stored API key can no longer be read: the server's encryption key has "
    "changed since it was saved. Enter the key again in the model's settings."
)


class UnreadableSecret(ApplicationError):
    """A secret is stored but does not decrypt with the current key material."""

    def __init__(self) -> None:
        super().__init__(UNREADABLE_MESSAGE, details={"api_key": [UNREADABLE_MESSAGE]})


@lru_cache(maxsize=4)
def _fernet_for(material: str) -> Fernet:
    digest = hashlib.sha256(f"lmix-api-keys:{material}".encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def _fernet() -> Fernet:
    # Read per call (the derivation is cached), so a changed setting takes effect.
    return _fernet_for(settings.LMIX_ENCRYPTION_KEY or settings.SECRET_KEY)


def encrypt(plaintext: str) -> str:
    """Encrypt a secret for storage; the empty string stays empty."""
    if not plaintext:
        return ""
    return _fernet().encrypt(plaintext.encode()).decode()


def decrypt(ciphertext: str) -> str:
    """Decrypt a stored secret; the empty string (nothing stored) stays empty.

    Raises:
        UnreadableSecret: something is stored, but not under the current key material.
    """
    if not ciphertext:
        return ""
    try:
        return _fernet().decrypt(ciphertext.encode()).decode()
    except InvalidToken:
        raise UnreadableSecret() from None


def is_readable(ciphertext: str) -> bool:
    """Whether a stored secret decrypts (nothing stored counts as readable)."""
    try:
        decrypt(ciphertext)
    except UnreadableSecret:
        return False
    return True
