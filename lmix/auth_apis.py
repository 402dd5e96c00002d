"""Session authentication for the SPA: CSRF cookie, sign up, log in, log out, me; the
account's own settings: change the password, delete the account."""

from collections.abc import Iterator
from contextlib import contextmanager

from django.contrib.auth import (
    authenticate,
    get_user_model,
    login,
    logout,
    password_validation,
    update_session_auth_hash,
)
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

from . import account_services
from .errors import ApplicationError
from .serializers import UserSerializer
from .throttles import (
    AccountPasswordThrottle,
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
        login(request._request, user, backend="lmix.authentication.UserBackend")
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


class PasswordCheckedMixin(AttemptThrottledMixin):
    """Only a wrong current password uses up the AccountPasswordThrottle's budget."""

    throttled_message = "Too many wrong passwords. Try again later."

    @contextmanager
    def password_attempt(self) -> Iterator[None]:
        try:
            yield
        except Exception as error:
            wrong = isinstance(error, ApplicationError) and (
                error.message == account_services.WRONG_PASSWORD
            )
            if not wrong:
                self.attempt_succeeded()
            raise
        self.attempt_succeeded()


class MeApi(PasswordCheckedMixin, APIView):
    @extend_schema_serializer(component_name="AccountDeleteInput")
    class DeleteInputSerializer(serializers.Serializer):
        username = serializers.CharField(max_length=150, trim_whitespace=False)
        password = serializers.CharField(max_length=128, write_only=True, trim_whitespace=False)

    def get_throttles(self) -> list:
        # Only the delete checks a password; reading who is signed in is never throttled.
        return [AccountPasswordThrottle()] if self.request.method == "DELETE" else []

    @extend_schema(responses=UserSerializer)
    def get(self, request: Request) -> Response:
        return Response(UserSerializer(request.user).data)

    @extend_schema(
        request=DeleteInputSerializer,
        responses={204: None, 429: TOO_MANY},
        description="Delete the account and everything it owns; the session ends. Seats it "
        "plays in other people's frames become open.",
    )
    def delete(self, request: Request) -> Response:
        data = self.DeleteInputSerializer(data=request.data)
        with self.password_attempt():
            data.is_valid(raise_exception=True)
            account_services.account_delete(user=request.user, **data.validated_data)
        logout(request._request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class PasswordApi(PasswordCheckedMixin, APIView):
    """Change the password; this session stays signed in, the account's others end."""

    throttle_classes = [AccountPasswordThrottle]

    @extend_schema_serializer(component_name="PasswordChangeInput")
    class InputSerializer(serializers.Serializer):
        old_password = serializers.CharField(max_length=128, write_only=True, trim_whitespace=False)
        new_password = serializers.CharField(max_length=128, write_only=True, trim_whitespace=False)

    @extend_schema(request=InputSerializer, responses={204: None, 429: TOO_MANY})
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        with self.password_attempt():
            data.is_valid(raise_exception=True)
            account_services.password_change(user=request.user, **data.validated_data)
        # A new password changes the session hash: keep this session, drop the others.
        update_session_auth_hash(request._request, request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
