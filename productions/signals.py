"""A deleted account's productions go with it, through `production_delete` (its cast
PROTECTs the personas the user's cascade deletes next)."""

from django.contrib.auth.models import AbstractBaseUser
from django.dispatch import receiver

from lmix.account_services import account_deleting

from .models import Production
from .services import production_delete


@receiver(account_deleting, dispatch_uid="productions_account_deleting")
def account_productions_delete(sender, user: AbstractBaseUser, **kwargs) -> None:
    for production in Production.objects.filter(owner=user):
        production_delete(production=production)
