"""REST endpoints of frames: create from a production, list, my view of one, join with an
invite code, the GM's seat changes, invite rotation and controls; liquid; passes."""

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lmix.answers import answer
from lmix.errors import ApplicationError
from lmix.throttles import CodeLookupThrottledMixin
from productions.selectors import production_get

from . import frames
from . import liquid as liquid_services
from .ai_seats import ai_intention_regenerate, frame_advance
from .answers import (
    ActingSeats,
    EpilogueView,
    FrameList,
    FrameView,
    InviteCode,
    InvitePreview,
    PassAccepted,
    PassList,
    SpectatorCode,
    SpectatorView,
    WindowAnswer,
)
from .epilogue import epilogue_retry, epilogue_view, frame_close
from .event_types import LiquidBody, NarrativeBody, OutcomeBody, SeatBody, TalkBody
from .faces.run import FACE_PASS_KINDS, face_pass_retry
from .frame_events import seat_body
from .frame_selectors import (
    FrameAccess,
    frame_access_or_404,
    frame_access_to,
    frame_gm_access_or_404,
    frame_summaries,
    invite_preview,
    spectated_frame,
)
from .gm_voice import gm_narrate, gm_note
from .medium import medium_pass_retry
from .models import Face, Frame, Liquid, Pass, PassKind, Seat, Window
from .selectors import (
    frame_view,
    liquid_body,
    liquid_reading,
    narrative_body,
    outcome_body,
    pass_list,
    spectator_view,
    talk_body,
    window_body,
)
from .serializers import (
    FrameCloseSerializer,
    FrameCreateSerializer,
    FrameJoinSerializer,
    FrameUpdateSerializer,
    GmNarrationSerializer,
    GmNoteSerializer,
    LiquidEditSerializer,
    LiquidSubmitSerializer,
    SeatLeaveSerializer,
    SeatUpdateSerializer,
    SpectatorsSerializer,
    TalkSerializer,
)
from .talk import talk_post
from .windows import window_cancel, window_fire_now


def _gm_access_as_row(request: Request, frame_id: object, not_found: str) -> FrameAccess:
    """`frame_gm_access_or_404` for a row of the frame (window, pass): an outsider gets the 404 a
    missing row gets, `not_found`, so they cannot tell whether it exists."""
    try:
        return frame_gm_access_or_404(user=request.user, frame_id=frame_id)
    except Http404:
        raise ApplicationError(not_found, status_code=404) from None


def _seat_of(frame: Frame, seat_id: object) -> Seat:
    """The seat a request body names, in this frame; else a 400 on its `seat` field."""
    seat = Seat.objects.filter(frame=frame, pk=seat_id).first()
    if seat is None:
        raise ApplicationError(
            "No such seat in this frame.", details={"seat": ["Not a seat of this frame."]}
        )
    return seat


class ProductionFramesApi(APIView):
    @extend_schema(request=FrameCreateSerializer, responses={201: FrameView})
    def post(self, request: Request, production_id: str) -> Response:
        """Start a frame of your production: its cast become seats, AI-played by their
        assistants except the personas in `open_seats`, which wait for players."""
        production = production_get(owner=request.user, production_id=production_id)
        data = FrameCreateSerializer(data=request.data, context={"request": request})
        data.is_valid(raise_exception=True)
        frame = frames.frame_create(production=production, **data.validated_data)
        access = frame_access_or_404(user=request.user, frame_id=frame.pk)
        return answer(FrameView, frame_view(access), status.HTTP_201_CREATED)


class FrameListApi(APIView):
    @extend_schema(
        operation_id="frames_list",
        request=None,
        responses={200: FrameList},
    )
    def get(self, request: Request) -> Response:
        """Frames you run or play in, newest first: your character in each, and whom a
        round under way waits for (`my_turn`: you)."""
        return answer(FrameList, frame_summaries(user=request.user))


class FrameDetailApi(APIView):
    @extend_schema(request=None, responses={200: FrameView})
    def get(self, request: Request, frame_id: str) -> Response:
        """Your view of the frame: its `seq`, seats, the liquid you may read, every outcome,
        your own narratives and the open windows (the GM's view holds everything)."""
        access = frame_access_or_404(user=request.user, frame_id=frame_id)
        return answer(FrameView, frame_view(access))

    @extend_schema(request=FrameUpdateSerializer, responses={200: FrameView})
    def patch(self, request: Request, frame_id: str) -> Response:
        """GM: rename the frame or change its tempo, who reads intentions, and its soft and
        medium models (null: the characters' own models). Everyone in the frame is told;
        running passes keep their model, the next ones use the new one."""
        access = frame_gm_access_or_404(user=request.user, frame_id=frame_id)
        data = FrameUpdateSerializer(data=request.data, context={"request": request})
        data.is_valid(raise_exception=True)
        frames.frame_update(frame=access.frame, **data.validated_data)
        return answer(FrameView, frame_view(access))


class FrameJoinApi(CodeLookupThrottledMixin, APIView):
    @extend_schema(request=FrameJoinSerializer, responses={200: FrameView})
    def post(self, request: Request) -> Response:
        """Take an open seat with the frame's invite code."""
        data = FrameJoinSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        seat = frames.frame_join(
            user=request.user,
            invite_code=data.validated_data["invite_code"],
            seat_id=data.validated_data["seat"],
        )
        access = frame_access_or_404(user=request.user, frame_id=seat.frame_id)
        return answer(FrameView, frame_view(access))


class SeatDetailApi(APIView):
    @extend_schema(request=SeatUpdateSerializer, responses={200: SeatBody})
    def patch(self, request: Request, frame_id: str, seat_id: str) -> Response:
        """GM: open a seat (its player is removed at once) or give it to an assistant; say
        when an AI seat acts on its own (`ai_reacts`)."""
        access = frame_gm_access_or_404(user=request.user, frame_id=frame_id)
        seat = Seat.objects.filter(frame=access.frame, pk=seat_id).first()
        if seat is None:
            raise ApplicationError("No such seat in this frame.", status_code=404)
        data = SeatUpdateSerializer(data=request.data, context={"request": request})
        data.is_valid(raise_exception=True)
        seat = frames.seat_update(frame=access.frame, seat=seat, **data.validated_data)
        return answer(SeatBody, seat_body(seat))


class FrameInviteApi(APIView):
    @extend_schema(request=None, responses={200: InviteCode})
    def post(self, request: Request, frame_id: str) -> Response:
        """GM: a new invite code; the old one stops working."""
        frame = frames.invite_rotate(
            frame=frame_gm_access_or_404(user=request.user, frame_id=frame_id).frame
        )
        return answer(InviteCode, {"invite_code": frame.invite_code})


def _liquid_for(request: Request, liquid_id: str) -> tuple[Liquid, FrameAccess]:
    """Liquid in a frame the caller may see, and that access; or 404 (writing rights are
    the service's)."""
    # Only what the access check reads: the service reads the liquid again, locked.
    liquid = next(iter(Liquid.objects.select_related("frame").filter(pk=liquid_id)), None)
    access = frame_access_to(user=request.user, frame=liquid.frame) if liquid else None
    if liquid is None or access is None:
        raise ApplicationError("No such intention.", status_code=404)
    return liquid, access


def _liquid_answer(access: FrameAccess, liquid: Liquid, code: int = status.HTTP_200_OK) -> Response:
    return answer(LiquidBody, liquid_body(liquid, liquid_reading(access, liquid)), code)


class FrameLiquidApi(APIView):
    @extend_schema(request=LiquidSubmitSerializer, responses={201: LiquidBody})
    def post(self, request: Request, frame_id: str) -> Response:
        """Submit what your character intends (the GM may write for AI-played seats). Its
        soft pass starts at once; it stays revisable until you commit it. With `face`
        author or designer (the GM's always; a player's where the frame's `player_faces`
        allow, else 403), it is world content or a skill to be: no seat, no soft pass; once
        committed its pass makes it at once."""
        access = frame_access_or_404(user=request.user, frame_id=frame_id)
        data = LiquidSubmitSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        face = data.validated_data["face"]
        seat = None
        if face == Face.PLAYER:
            seat = _seat_of(access.frame, data.validated_data["seat"])
        liquid = liquid_services.liquid_submit(
            frame=access.frame,
            seat=seat,
            content=data.validated_data["content"],
            user=request.user,
            limited=True,
            face=face,
        )
        return _liquid_answer(access, liquid, status.HTTP_201_CREATED)


class LiquidDetailApi(APIView):
    @extend_schema(request=LiquidEditSerializer, responses={200: LiquidBody})
    def patch(self, request: Request, liquid_id: str) -> Response:
        """Revise a submitted intention (not once committed)."""
        liquid, access = _liquid_for(request, liquid_id)  # an outsider learns nothing more
        data = LiquidEditSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        liquid = liquid_services.liquid_edit(
            liquid=liquid, content=data.validated_data["content"], user=request.user, limited=True
        )
        return _liquid_answer(access, liquid)

    @extend_schema(request=None, responses={204: None})
    def delete(self, request: Request, liquid_id: str) -> Response:
        """Withdraw a submitted intention."""
        liquid, _ = _liquid_for(request, liquid_id)
        liquid_services.liquid_withdraw(liquid=liquid, user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class LiquidCommitApi(APIView):
    @extend_schema(request=None, responses={200: LiquidBody})
    def post(self, request: Request, liquid_id: str) -> Response:
        """Commit an intention: your character's window opens."""
        liquid, access = _liquid_for(request, liquid_id)
        liquid = liquid_services.liquid_commit(liquid=liquid, user=request.user)
        return _liquid_answer(access, liquid)


class LiquidRegenerateApi(APIView):
    @extend_schema(request=None, responses={204: None})
    def post(self, request: Request, liquid_id: str) -> Response:
        """GM: throw away what an AI-played seat intends (one the secret guard holds, say)
        and let its assistant act again. Releasing it is committing it; editing it, the
        usual edit (the words are then the GM's)."""
        liquid, _ = _liquid_for(request, liquid_id)
        ai_intention_regenerate(liquid=liquid, user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class FrameControlApi(APIView):
    """GM: pause or resume the frame."""

    target: str = ""

    @extend_schema(request=None, responses={200: FrameView})
    def post(self, request: Request, frame_id: str) -> Response:
        access = frame_gm_access_or_404(user=request.user, frame_id=frame_id)
        liquid_services.frame_status_set(frame=access.frame, status=self.target)
        access = frame_access_or_404(user=request.user, frame_id=frame_id)  # read anew
        return answer(FrameView, frame_view(access))


class FrameCloseApi(APIView):
    @extend_schema(request=FrameCloseSerializer, responses={200: FrameView})
    def post(self, request: Request, frame_id: str) -> Response:
        """GM: close the scene for good; with `epilogue`, each player's character (a shared
        frame: everyone) then gets a closing narrative, written in the background
        (GET /api/frames/{id}/epilogue says when)."""
        access = frame_gm_access_or_404(user=request.user, frame_id=frame_id)
        data = FrameCloseSerializer(data=request.data or {})
        data.is_valid(raise_exception=True)
        frame_close(frame=access.frame, epilogue=data.validated_data["epilogue"])
        access = frame_access_or_404(user=request.user, frame_id=frame_id)  # read anew
        return answer(FrameView, frame_view(access))


class FrameEpilogueApi(APIView):
    @extend_schema(request=None, responses={200: EpilogueView})
    def get(self, request: Request, frame_id: str) -> Response:
        """The closed scene's epilogues you may read (the GM's: every one) and where their
        writing stands; a page polls it until they are done or failed."""
        access = frame_access_or_404(user=request.user, frame_id=frame_id)
        return answer(EpilogueView, epilogue_view(access))


class FramePassesApi(APIView):
    @extend_schema(request=None, responses={200: PassList})
    def get(self, request: Request, frame_id: str) -> Response:
        """GM: every soft and medium pass — seat, trigger, status, the exact messages sent,
        and its LLM calls."""
        access = frame_gm_access_or_404(user=request.user, frame_id=frame_id)
        return answer(PassList, pass_list(frame=access.frame))


class FrameAdvanceApi(APIView):
    @extend_schema(request=None, responses={202: ActingSeats})
    def post(self, request: Request, frame_id: str) -> Response:
        """GM: move the scene on — every AI-played seat with nothing pending acts once (a
        frame without human players moves only this way)."""
        access = frame_gm_access_or_404(user=request.user, frame_id=frame_id)
        acting = frame_advance(frame=access.frame)
        return answer(ActingSeats, {"acting_seats": acting}, status.HTTP_202_ACCEPTED)


class PassRetryApi(APIView):
    @extend_schema(request=None, responses={202: PassAccepted})
    def post(self, request: Request, pass_id: str) -> Response:
        """GM: run a failed medium pass again (its liquid waited, committed, meanwhile),
        write a failed epilogue again, or read a failed author's or designer's writing
        again."""
        pass_ = Pass.objects.filter(pk=pass_id).first()
        if pass_ is None:
            raise ApplicationError("No such pass.", status_code=404)
        _gm_access_as_row(request, pass_.frame_id, "No such pass.")
        if pass_.kind == PassKind.EPILOGUE:
            pass_ = epilogue_retry(pass_=pass_)
        elif pass_.kind in FACE_PASS_KINDS:
            pass_ = face_pass_retry(pass_=pass_)
        else:
            pass_ = medium_pass_retry(pass_=pass_)
        body = {"id": str(pass_.pk), "status": pass_.status}
        return answer(PassAccepted, body, status.HTTP_202_ACCEPTED)


class InvitePreviewApi(CodeLookupThrottledMixin, APIView):
    @extend_schema(request=None, responses={200: InvitePreview})
    def get(self, request: Request, invite_code: str) -> Response:
        """What an invite link offers: the frame, its seats' characters as everyone sees
        them, and who holds each seat (404 for a wrong or rotated code)."""
        return answer(InvitePreview, invite_preview(user=request.user, invite_code=invite_code))


class FrameLeaveApi(APIView):
    @extend_schema(request=SeatLeaveSerializer, responses={204: None})
    def post(self, request: Request, frame_id: str) -> Response:
        """Give up your seat: it is open again for someone else, and your sockets close."""
        access = frame_access_or_404(user=request.user, frame_id=frame_id)
        data = SeatLeaveSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        if data.validated_data["seat"] not in access.seat_ids:
            raise ApplicationError(
                "That is not your seat.", details={"seat": ["You do not play this seat."]}
            )
        frames.seat_leave(seat=Seat.objects.get(pk=data.validated_data["seat"]))
        return Response(status=status.HTTP_204_NO_CONTENT)


def _window_for_gm(request: Request, window_id: str) -> Window:
    window = Window.objects.filter(pk=window_id).first()
    if window is None:
        raise ApplicationError("No such window.", status_code=404)
    _gm_access_as_row(request, window.frame_id, "No such window.")
    return window


class WindowFireApi(APIView):
    @extend_schema(request=None, responses={202: WindowAnswer})
    def post(self, request: Request, window_id: str) -> Response:
        """GM: fire an open window now; its character's medium pass starts."""
        pass_ = window_fire_now(window=_window_for_gm(request, window_id))
        window = Window.objects.get(pk=pass_.window_id)
        return answer(WindowAnswer, {"window": window_body(window)}, status.HTTP_202_ACCEPTED)


class WindowCancelApi(APIView):
    @extend_schema(request=None, responses={200: WindowAnswer})
    def post(self, request: Request, window_id: str) -> Response:
        """GM: cancel an open window; its intentions go back to their player, submitted."""
        window = window_cancel(window=_window_for_gm(request, window_id))
        return answer(WindowAnswer, {"window": window_body(window)})


class FrameTalkApi(APIView):
    @extend_schema(request=TalkSerializer, responses={201: TalkBody})
    def post(self, request: Request, frame_id: str) -> Response:
        """Table talk: say something out of character to everyone at the table (the GM and
        the players). No pass ever reads it."""
        access = frame_access_or_404(user=request.user, frame_id=frame_id)
        data = TalkSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        talk = talk_post(access=access, user=request.user, text=data.validated_data["text"])
        return answer(TalkBody, talk_body(talk), status.HTTP_201_CREATED)


class FrameNarrationApi(APIView):
    @extend_schema(request=GmNarrationSerializer, responses={201: OutcomeBody})
    def post(self, request: Request, frame_id: str) -> Response:
        """GM: narrate what happens, in your own words: an outcome everyone sees (spectators
        too) and every character witnesses; the next passes read it as a world fact."""
        access = frame_gm_access_or_404(user=request.user, frame_id=frame_id)
        data = GmNarrationSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        outcome = gm_narrate(frame=access.frame, text=data.validated_data["text"])
        return answer(OutcomeBody, outcome_body(outcome), status.HTTP_201_CREATED)


class FrameNoteApi(APIView):
    @extend_schema(request=GmNoteSerializer, responses={201: NarrativeBody})
    def post(self, request: Request, frame_id: str) -> Response:
        """GM: tell one character something only it learns: a narrative of its own, read by
        its player (and you), that its next narratives follow on from."""
        access = frame_gm_access_or_404(user=request.user, frame_id=frame_id)
        data = GmNoteSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        seat = _seat_of(access.frame, data.validated_data["seat"])
        note = gm_note(frame=access.frame, seat=seat, text=data.validated_data["text"])
        return answer(NarrativeBody, narrative_body(note), status.HTTP_201_CREATED)


class FrameSpectatorsApi(APIView):
    @extend_schema(request=SpectatorsSerializer, responses={200: SpectatorCode})
    def post(self, request: Request, frame_id: str) -> Response:
        """GM: let spectators watch the outcomes through a new link (`enabled` true), or
        stop them (false): open spectator sockets close and the old link shows nothing."""
        access = frame_gm_access_or_404(user=request.user, frame_id=frame_id)
        data = SpectatorsSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        frame = frames.spectators_set(frame=access.frame, enabled=data.validated_data["enabled"])
        return answer(SpectatorCode, {"spectator_code": frame.spectator_code})


class SpectateApi(CodeLookupThrottledMixin, APIView):
    # The link is the credential: signed-out visitors watch too (counted per address).
    permission_classes = [AllowAny]

    @extend_schema(request=None, responses={200: SpectatorView})
    def get(self, request: Request, code: str) -> Response:
        """Watch a frame with the GM's spectator link, signed in or not: its seats,
        outcomes and windows — never anyone's intentions, narratives or table talk."""
        frame = spectated_frame(code=code)
        if frame is None:
            raise ApplicationError(
                "This spectator link is not valid (any more). Ask the GM for a new one.",
                status_code=404,
            )
        return answer(SpectatorView, spectator_view(frame))
