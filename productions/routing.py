"""Websocket routes of productions."""

from django.urls import path

from .consumers import ProductionConsumer

websocket_urlpatterns = [
    path("ws/productions/<uuid:production_id>/", ProductionConsumer.as_asgi()),
]
