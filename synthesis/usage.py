"""Which frames use an authoring object (authoring/usage.py asks before a delete): its
seats' characters and assistants, and the models a frame's passes run on."""

from django.db.models import Q

from authoring.models import Assistant, Persona
from authoring.usage import Authored, User, uses
from lmix.models import LLMModel

from .models import Frame


@uses
def frames_using(obj: Authored) -> list[User]:
    if isinstance(obj, Persona):
        used = Q(seats__persona=obj) | Q(seats__assistant__persona=obj)
    elif isinstance(obj, Assistant):
        used = Q(seats__assistant=obj)
    elif isinstance(obj, LLMModel):
        used = Q(seats__assistant__model=obj) | Q(soft_model=obj) | Q(medium_model=obj)
    else:
        return []  # worlds, scenarios and affiliations reach frames through productions
    frames = Frame.objects.filter(pk__in=Frame.objects.filter(used).values("pk"))
    return [User("frame", str(f.pk), f.name) for f in frames.order_by("created_at")]
