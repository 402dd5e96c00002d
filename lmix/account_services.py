"""Writes to one's own account: change the password, delete the account and all it owns."""

from django.contrib.auth import password_validation
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.dispatch import Signal

from .errors import ApplicationError
from .models import LLMCall

WRONG_PASSWORD = "That is not your current password."

# Sent by `account_delete` (keyword `user`) inside its transaction, before the user's own
# rows go: each app above lmix lets go of what the user holds there (seats in other
# people's frames) and deletes what their cascade cannot reach in order (frames and
# productions, whose seats and casts PROTECT the personas the user's cascade deletes) or
# cannot reach at all (uploaded avatars).
account_deleting = Signal()


def _password_check(*, user: AbstractBaseUser, password: str, field: str) -> None:
    if not user.check_password(password):
        raise ApplicationError(WRONG_PASSWORD, details={field: [WRONG_PASSWORD]})


@transaction.atomic
def password_change(*, user: AbstractBaseUser, old_password: str, new_password: str) -> None:
    """Set a new password after checking the current one and Django's password validators.

    Raises:
        ApplicationError: the old password is wrong (under `old_password`) or the new one is
            refused by a validator (every message, under `new_password`).
    """
    _password_check(user=user, password=old_password, field="old_password")
    try:
        password_validation.validate_password(new_password, user)
    except DjangoValidationError as error:
        raise ApplicationError(
            error.messages[0], details={"new_password": error.messages}
        ) from None
    user.set_password(new_password)
    user.save(update_fields=["password"])


@transaction.atomic
def account_delete(*, user: AbstractBaseUser, username: str, password: str) -> None:
    """Delete the account and everything it owns (models, worlds, personas, productions, its
    own frames, its call records). Seats it plays in other people's frames become open again,
    so those frames go on; its lines there stay, without an author.

    Raises:
        ApplicationError: the username typed is not this account's (under `username`) or the
            password is wrong (under `password`); nothing is deleted then.
    """
    if username != user.get_username():
        message = "Type your username exactly to confirm."
        raise ApplicationError(message, details={"username": [message]})
    _password_check(user=user, password=password, field="password")
    account_deleting.send(sender=type(user), user=user)
    LLMCall.objects.filter(owner=user).delete()
    user.delete()
