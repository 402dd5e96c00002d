"""drf-spectacular hooks: one named enum per set of choices across serializers and the
pydantic answers (synthesis/answers.py); every field of a serializer's answer required."""

from typing import Any

from django.conf import settings
from django.utils.module_loading import import_string
from drf_spectacular import openapi
from drf_spectacular.plumbing import list_hash
from rest_framework import serializers


def pydantic_enum_ids(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Give each enum that pydantic wrote the id spectacular gives a serializer's enum of
    the same Django choices (their values and labels): spectacular's enum hook then names
    both after the one `ENUM_NAME_OVERRIDES` entry instead of reporting a collision."""
    ids = {}
    for path in settings.SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"].values():
        choices = import_string(path).choices
        ids[frozenset(value for value, _ in choices)] = list_hash(choices)
    for schema in result.get("components", {}).get("schemas", {}).values():
        for prop in schema.get("properties", {}).values():
            prop = prop.get("items", prop) if prop.get("type") == "array" else prop
            if "enum" in prop and "x-spec-enum-id" not in prop:
                enum_id = ids.get(frozenset(prop["enum"]))
                if enum_id is not None:
                    prop["x-spec-enum-id"] = enum_id
    return result


class AutoSchema(openapi.AutoSchema):
    """A model serializer's answer holds every field it reads, so each is required in a
    response (spectacular marks only required input and read-only fields) but those its
    `Meta.answer_may_omit` names: the generated types say `name: string`, not `name?`."""

    def _map_basic_serializer(self, serializer: Any, direction: str) -> dict[str, Any]:
        schema = super()._map_basic_serializer(serializer, direction)
        if (
            direction == "response"
            and isinstance(serializer, serializers.ModelSerializer)
            and schema.get("properties")
        ):
            may_omit = getattr(serializer.Meta, "answer_may_omit", ())
            schema["required"] = sorted(set(schema["properties"]) - set(may_omit))
        return schema
