"""factory-boy factories for the authoring data and productions."""

import factory
from django.contrib.auth import get_user_model

from authoring.models import Affiliation, Assistant, Persona, Scenario, World
from lmix.models import LLMModel


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password("a-good-password-1")


class OwnedFactory(factory.django.DjangoModelFactory):
    owner = factory.SubFactory(UserFactory)


class LLMModelFactory(OwnedFactory):
    class Meta:
        model = LLMModel

    name = factory.Sequence(lambda n: f"Model {n}")
    provider = "openai_compatible"
    api_endpoint = "http://127.0.0.1:9/v1"
    model_id = factory.Sequence(lambda n: f"model-{n}")


class WorldFactory(OwnedFactory):
    class Meta:
        model = World

    name = factory.Sequence(lambda n: f"World {n}")
    description = "A world."


class ScenarioFactory(OwnedFactory):
    class Meta:
        model = Scenario

    name = factory.Sequence(lambda n: f"Scenario {n}")
    description = "A scenario."


class AffiliationFactory(OwnedFactory):
    class Meta:
        model = Affiliation

    name = factory.Sequence(lambda n: f"Group {n}")
    universal_truth = factory.Sequence(lambda n: f"group-{n}-universal")
    internal_truth = factory.Sequence(lambda n: f"group-{n}-internal")
    external_truth = factory.Sequence(lambda n: f"group-{n}-external")


class PersonaFactory(OwnedFactory):
    class Meta:
        model = Persona

    name = factory.Sequence(lambda n: f"Person {n}")
    universal_truth = factory.Sequence(lambda n: f"person-{n}-universal")
    internal_truth = factory.Sequence(lambda n: f"person-{n}-internal")
    external_truth = factory.Sequence(lambda n: f"person-{n}-external")


class AssistantFactory(OwnedFactory):
    class Meta:
        model = Assistant

    persona = factory.SubFactory(PersonaFactory, owner=factory.SelfAttribute("..owner"))
    model = factory.SubFactory(LLMModelFactory, owner=factory.SelfAttribute("..owner"))
