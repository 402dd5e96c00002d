"""Which productions use an authoring object (authoring/usage.py asks before a delete)."""

from django.db.models import Q

from authoring.models import Affiliation, Assistant, Persona, Scenario, World
from authoring.usage import Authored, User, uses

from .models import Production


@uses
def productions_using(obj: Authored) -> list[User]:
    if isinstance(obj, World):
        used = Q(world=obj)
    elif isinstance(obj, Scenario):
        used = Q(scenario=obj)
    elif isinstance(obj, Affiliation):
        return []
    elif isinstance(obj, Persona):
        used = Q(cast__assistant__persona=obj)
    elif isinstance(obj, Assistant):
        used = Q(cast__assistant=obj)
    else:
        used = Q(cast__assistant__model=obj)
    # A join through many rows repeats a production: keep each once.
    productions = Production.objects.filter(pk__in=Production.objects.filter(used).values("pk"))
    return [User("production", str(p.pk), p.name) for p in productions.order_by("created_at")]
