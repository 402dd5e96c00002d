"""Websocket routes of frames."""

from django.urls import path

from .consumers import FrameConsumer, SpectatorConsumer

websocket_urlpatterns = [
    path("ws/frames/<uuid:frame_id>/", FrameConsumer.as_asgi()),
    path("ws/spectate/<slug:code>/", SpectatorConsumer.as_asgi()),
]
