"""Websocket routes of every app, gathered for the ASGI router."""

from productions.routing import websocket_urlpatterns as production_routes
from synthesis.routing import websocket_urlpatterns as frame_routes

websocket_urlpatterns = [*production_routes, *frame_routes]
