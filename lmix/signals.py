"""Every new user gets the offline narrator, default until they pick another model."""

from django.conf import settings
from django.db.models.signals import post_save
from django.dispatch import receiver


@receiver(post_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="lmix_offline_narrator")
def give_new_user_the_offline_narrator(sender, instance, created: bool, **kwargs) -> None:
    if created and not kwargs.get("raw"):
        from .services import offline_model_ensure

        offline_model_ensure(owner=instance)
