"""Session authentication for the SPA: CSRF cookie, sign up, log in, log out, me."""

from django.contrib.auth import authenticate, get_user_model, login, logout, password_validation
from django.core.exceptions import ValidationError as DjangoValidationError
from django.middleware.csrf import get_token
from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    extend_schema_serializer,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.authentication import CSRFCheck
from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .errors import ApplicationError
from .serializers import UserSerializer
from .throttles import (
    AttemptThrottledMixin,
    LoginAddressThrottle,
    LoginUsernameThrottle,
    SignupAddressThrottle,
)

TOO_MANY = OpenApiResponse(description="Too many attempts; Retry-After says when to try again.")


def enforce_csrf(request: Request) -> None:
    """Anonymous unsafe requests (sign up, log in) need the CSRF header too."""
    check = CSRFCheck(lambda _request: None)
    check.process_request(request._request)
    reason = check.process_view(request._request, None, (), {})
    if reason:
        raise PermissionDenied(f"CSRF Failed: {reason}")


class CsrfApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(responses=inline_serializer("Csrf", {"csrfToken": serializers.CharField()}))
    def get(self, request: Request) -> Response:
        return Response({"csrfToken": get_token(request._request)})


class SignupApi(AttemptThrottledMixin, APIView):
    permission_classes = [AllowAny]
    throttle_classes = [SignupAddressThrottle]
    throttled_message = "Too many sign-ups from this address."

    @extend_schema_serializer(component_name="SignupInput")
    class InputSerializer(serializers.Serializer):
        username = serializers.RegexField(
            r"^[\w.@+-]+\Z",
            max_length=150,
            error_messages={"invalid": "Use letters, digits and @/./+/-/_ only."},
        )
        password = serializers.CharField(max_length=128, write_only=True, trim_whitespace=False)
        email = serializers.EmailField(required=False, allow_blank=True, max_length=254)

    @extend_schema(request=InputSerializer, responses={201: UserSerializer, 429: TOO_MANY})
    def post(self, request: Request) -> Response:
        enforce_csrf(request)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user_model = get_user_model()
        username = data.validated_data["username"]
        if user_model.objects.filter(username__iexact=username).exists():
            raise ApplicationError(
                "That username is taken.", details={"username": ["That username is taken."]}
            )
        candidate = user_model(username=username, email=data.validated_data.get("email", ""))
        try:
            password_validation.validate_password(data.validated_data["password"], candidate)
        except DjangoValidationError as error:
            raise ApplicationError(
                error.messages[0], details={"password": error.messages}
            ) from None
        user = user_model.objects.create_user(
            username=username,
            email=data.validated_data.get("email", ""),
            password=data.validated_data["password"],
        )
        login(request._request, user, backend="django.contrib.auth.backends.ModelBackend")
        return Response(UserSerializer(user).data, status=status.HTTP_201_CREATED)


class LoginApi(AttemptThrottledMixin, APIView):
    """Failed logins are throttled per username and per address (lmix/throttles.py)."""

    permission_classes = [AllowAny]
    throttle_classes = [LoginUsernameThrottle, LoginAddressThrottle]
    throttled_message = "Too many failed logins."

    @extend_schema_serializer(component_name="LoginInput")
    class InputSerializer(serializers.Serializer):
        username = serializers.CharField(max_length=150)
        password = serializers.CharField(max_length=128, write_only=True, trim_whitespace=False)

    @extend_schema(request=InputSerializer, responses={200: UserSerializer, 429: TOO_MANY})
    def post(self, request: Request) -> Response:
        enforce_csrf(request)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = authenticate(request._request, **data.validated_data)
        if user is None:
            raise ApplicationError("Wrong username or password.")
        login(request._request, user)
        self.attempt_succeeded()
        return Response(UserSerializer(user).data)


class LogoutApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(request=None, responses={204: None})
    def post(self, request: Request) -> Response:
        if request.user.is_authenticated:
            enforce_csrf(request)
        logout(request._request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MeApi(APIView):
    @extend_schema(responses=UserSerializer)
    def get(self, request: Request) -> Response:
        return Response(UserSerializer(request.user).data)
