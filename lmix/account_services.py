"""Writes to one's own account: change the password, delete the account and all it owns."""

from django.contrib.auth import password_validation
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction

from .errors import ApplicationError
from .models import LLMCall, Persona
from .services import avatar_discard_on_commit

WRONG_PASSWORD = "That is not your current password."


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
    # Imported here: productions builds on lmix, not the other way round.
    from productions.frame_events import frame_sockets_close_on_commit
    from productions.frame_services import seat_leave
    from productions.models import Frame, Production, Seat
    from productions.services import production_delete

    if username != user.get_username():
        message = "Type your username exactly to confirm."
        raise ApplicationError(message, details={"username": [message]})
    _password_check(user=user, password=password, field="password")
    for seat in Seat.objects.filter(user=user).exclude(frame__owner=user).select_related("frame"):
        seat_leave(seat=seat)
    # Frames and productions first: their seats and casts PROTECT the personas and worlds
    # that the user's cascade deletes next. Once committed, their sockets close (4404).
    for frame_id in Frame.objects.filter(owner=user).values_list("pk", flat=True):
        frame_sockets_close_on_commit(frame_id)
    Frame.objects.filter(owner=user).delete()
    for production in Production.objects.filter(owner=user):
        production_delete(production=production)
    LLMCall.objects.filter(owner=user).delete()
    for url in Persona.objects.filter(owner=user).values_list("avatar_url", flat=True):
        avatar_discard_on_commit(url)  # uploaded pictures go with their personas
    user.delete()
