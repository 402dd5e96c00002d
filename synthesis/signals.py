"""What frames do when something they hang on goes: a frame's sockets close once its
deletion commits (4404), however it was deleted; a deleted account's seats open again."""

from django.contrib.auth.models import AbstractBaseUser
from django.db.models.signals import pre_delete
from django.dispatch import receiver

from lmix.account_services import account_deleting

from .frame_events import frame_sockets_close_on_commit
from .frames import seat_leave
from .models import Frame, Seat


@receiver(pre_delete, sender=Frame, dispatch_uid="synthesis_frame_sockets_close")
def frame_sockets_close(sender, instance: Frame, **kwargs) -> None:
    # Also reached through a cascade: a production's deletion, its GM account's.
    frame_sockets_close_on_commit(instance.pk)


@receiver(account_deleting, dispatch_uid="synthesis_account_deleting")
def account_frames_let_go(sender, user: AbstractBaseUser, **kwargs) -> None:
    """Seats the user plays in other people's frames become open, so those frames go on;
    the user's own frames go (before the personas their seats PROTECT)."""
    for seat in Seat.objects.filter(user=user).exclude(frame__owner=user).select_related("frame"):
        seat_leave(seat=seat)
    Frame.objects.filter(owner=user).delete()
