"""Websocket routes of frames."""

from django.urls import path

from .consumers import FrameConsumer

websocket_urlpatterns = [
    path("ws/frames/<uuid:frame_id>/", FrameConsumer.as_asgi()),
]
