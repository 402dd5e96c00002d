"""A deleted account's uploaded avatars go with its personas."""

from django.contrib.auth.models import AbstractBaseUser
from django.dispatch import receiver

from lmix.account_services import account_deleting

from .models import Persona
from .services import avatar_discard_on_commit


@receiver(account_deleting, dispatch_uid="authoring_account_deleting")
def account_avatars_discard(sender, user: AbstractBaseUser, **kwargs) -> None:
    for url in Persona.objects.filter(owner=user).values_list("avatar_url", flat=True):
        avatar_discard_on_commit(url)
