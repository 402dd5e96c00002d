"""Encryption at rest for API keys (Fernet with a key derived from settings)."""

import base64
import hashlib
from functools import cache

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings


@cache
def _fernet() -> Fernet:
    material = settings.LMIX_ENCRYPTION_KEY or settings.SECRET_KEY
    digest = hashlib.sha256(f"lmix-api-keys:{material}".encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def encrypt(plaintext: str) -> str:
    """Encrypt a secret for storage; the empty string stays empty."""
    if not plaintext:
        return ""
    return _fernet().encrypt(plaintext.encode()).decode()


def decrypt(ciphertext: str) -> str:
    """Decrypt a stored secret; a value that no longer decrypts (key rotated) reads as empty."""
    if not ciphertext:
        return ""
    try:
        return _fernet().decrypt(ciphertext.encode()).decode()
    except InvalidToken:
        return ""
