/** Frames (live scenes): create, list, read, join, export, epilogues; the GM's seat changes and controls; liquid; passes; the socket URL. */
import { http } from './http'
import type {
  CharacterSheet,
  EpilogueView,
  SceneClosed,
  SceneItem,
  SceneList,
  Face,
  FrameBan,
  FrameCreateInput,
  FrameSummary,
  FrameUpdateInput,
  FrameView,
  FrameWindow,
  InvitePreview,
  Liquid,
  Narrative,
  Outcome,
  OutcomeEditInput,
  OutcomeRegenerated,
  PassInfo,
  PassStatus,
  Seat,
  SeatResetDone,
  SeatState,
  StateEditInput,
  MemoryEditInput,
  SeatUpdateInput,
  SnapshotImported,
  SnapshotRecord,
  SpectatorView,
  TalkMessage,
  ContentEntry,
  ContentInput,
} from './types'

const base = '/api/frames'
const one = (id: string) => `${base}/${encodeURIComponent(id)}`

export const listFrames = () => http.get<FrameSummary[]>(base)

/** Start a frame of one of my productions; answers the GM's view. */
export const createFrame = (productionId: string, input: FrameCreateInput) =>
  http.post<FrameView>(`/api/productions/${encodeURIComponent(productionId)}/frames`, input)

export const getFrame = (id: string) => http.get<FrameView>(one(id))

export type ExportFormat = 'md' | 'json'
/** My story of the frame to download (the GM's: every seat's), sent as an attachment: a plain link (the session cookie goes with it). */
export const exportUrl = (id: string, format: ExportFormat) => `${one(id)}/export?format=${format}`

/** Take an open seat with an invite code (404 wrong code, 409 taken / closed / already seated). */
export const joinFrame = (inviteCode: string, seat: string) =>
  http.post<FrameView>(`${base}/join`, { invite_code: inviteCode, seat })

/** The invite page's preview (any signed-in user; 404 for a wrong or rotated code). */
export const getInvite = (code: string) => http.get<InvitePreview>(`${base}/invite/${encodeURIComponent(code)}`)

/** GM: narrate to everyone (an outcome no seat acted, every character witnesses). */
export const narrate = (frameId: string, text: string) => http.post<Outcome>(`${one(frameId)}/narration`, { text })

/** GM: a private note only one seat's character learns (its player and the GM read it). */
export const sendNote = (frameId: string, seat: string, text: string) =>
  http.post<Narrative>(`${one(frameId)}/notes`, { seat, text })

/** GM: a new spectator link (`enabled`), or none. */
export const setSpectators = (frameId: string, enabled: boolean) =>
  http.post<{ spectator_code: string | null }>(`${one(frameId)}/spectators`, { enabled })

/** What a spectator link shows (404 once the GM stopped or renewed it). */
export const getSpectated = (code: string) => http.get<SpectatorView>(`/api/spectate/${encodeURIComponent(code)}`)

export function spectatorSocketUrl(code: string, loc: Pick<Location, 'protocol' | 'host'> = window.location): string {
  return `${loc.protocol === 'https:' ? 'wss' : 'ws'}://${loc.host}/ws/spectate/${encodeURIComponent(code)}/`
}

/** My character's sheet and the scene intro: what its prompts may know (the seat's player or the GM; others 404). */
export const getSeatSheet = (frameId: string, seatId: string) =>
  http.get<CharacterSheet>(`${one(frameId)}/seats/${encodeURIComponent(seatId)}/sheet`)

/** My character's state: relationships, mood, learned facts, memories (the seat's player or the GM; others 404). */
export const getSeatState = (frameId: string, seatId: string) =>
  http.get<SeatState>(`${one(frameId)}/seats/${encodeURIComponent(seatId)}/state`)

/** GM: set a seat's mood, edges or add a fact (each a delta by the GM). */
export const editSeatState = (frameId: string, seatId: string, input: StateEditInput) =>
  http.patch<SeatState>(`${one(frameId)}/seats/${encodeURIComponent(seatId)}/state`, input)

/** GM: pin, weigh, rewrite or remove (hide) one of a seat's memories (audited). */
export const editSeatMemory = (frameId: string, seatId: string, memoryId: string, input: MemoryEditInput) =>
  http.patch<SeatState>(`${one(frameId)}/seats/${encodeURIComponent(seatId)}/state/memories/${encodeURIComponent(memoryId)}`, input)

/** Where a seat's character snapshot downloads from (a plain link: the session cookie authorises it). */
export const snapshotUrl = (frameId: string, seatId: string) =>
  `${one(frameId)}/seats/${encodeURIComponent(seatId)}/snapshot`

/** The GM restores a snapshot file into a seat; `restore` names what to restore. */
export function importSnapshot(frameId: string, seatId: string, file: File, restore: string[]) {
  const body = new FormData()
  body.append('seat', seatId)
  body.append('file', file)
  for (const name of restore) body.append('restore', name)
  return http.post<SnapshotImported>(`${one(frameId)}/snapshots`, body)
}

/** The GM restores a snapshot the frame keeps (a reset's, an export, a periodic one) into a seat. */
export const restoreSnapshot = (frameId: string, seatId: string, snapshotId: string, restore: string[]) =>
  http.post<SnapshotImported>(`${one(frameId)}/snapshots`, { seat: seatId, snapshot_id: snapshotId, restore })

/** The GM resets a character; `confirm` is its name typed back. A snapshot is taken first. */
export const resetSeat = (frameId: string, seatId: string, confirm: string) =>
  http.post<SeatResetDone>(`${one(frameId)}/seats/${encodeURIComponent(seatId)}/reset`, { confirm })

/** The frame's kept snapshots (the GM's): exports, imports, resets' and periodic ones. */
export const listSnapshots = (frameId: string) =>
  http.get<{ snapshots: SnapshotRecord[] }>(`${one(frameId)}/snapshots`)

/** Where a kept snapshot downloads from. */
export const storedSnapshotUrl = (frameId: string, snapshotId: string) =>
  `${one(frameId)}/snapshots/${encodeURIComponent(snapshotId)}`

/** Give up my seat (it opens again; my sockets close with 4403). */
export const leaveFrame = (frameId: string, seat: string) => http.post<void>(`${one(frameId)}/leave`, { seat })

// ---- GM ----

/** Open a seat (kicks its player) or give it to an assistant of the seat's persona. */
export const updateSeat = (frameId: string, seatId: string, input: SeatUpdateInput) =>
  http.patch<Seat>(`${one(frameId)}/seats/${encodeURIComponent(seatId)}`, input)

/** Rename the frame, change its tempo, who reads intentions, or its models; answers the GM's view. */
export const updateFrame = (id: string, input: FrameUpdateInput) => http.patch<FrameView>(one(id), input)

export const rotateInvite = (id: string) => http.post<{ invite_code: string }>(`${one(id)}/invite`)

export type FrameControl = 'pause' | 'resume' | 'close'
/** Pause, resume or close; closing `{ epilogue: true }` has each player's character (a shared frame: everyone) given an epilogue. */
export const controlFrame = (id: string, action: FrameControl, body?: { epilogue?: boolean }) =>
  http.post<FrameView>(`${one(id)}/${action}`, body)

/** A closed scene's epilogues I may read (the GM's: all) and where their writing stands. */
export const getEpilogue = (id: string) => http.get<EpilogueView>(`${one(id)}/epilogue`)

/** The frame's scenes, oldest first, with the public summaries and my own character's (the GM's: all). */
export const getScenes = (id: string) => http.get<SceneList>(`${one(id)}/scenes`)
/** GM: close the scene now and open the next, titled `title` if given (409: nothing happened yet). */
export const closeScene = (id: string, title = '') => http.post<SceneClosed>(`${one(id)}/scenes/close`, { title })
/** GM: write a scene's failed summaries again. */
export const retryScene = (id: string, number: number) => http.post<SceneItem>(`${one(id)}/scenes/${number}/retry`)

/** Every AI seat with nothing pending acts once (the only way an all-AI frame moves). */
export const advanceFrame = (id: string) => http.post<{ acting_seats: string[] }>(`${one(id)}/advance`)

const windowUrl = (id: string) => `/api/windows/${encodeURIComponent(id)}`
/** Fire an open window now (409 when it is not open or the frame is paused). */
export const fireWindow = (id: string) => http.post<{ window: FrameWindow }>(`${windowUrl(id)}/fire`)
/** Cancel a window: its committed intentions go back to submitted. */
export const cancelWindow = (id: string) => http.post<{ window: FrameWindow }>(`${windowUrl(id)}/cancel`)

export const listPasses = (id: string) => http.get<PassInfo[]>(`${one(id)}/passes`)

export const retryPass = (passId: string) =>
  http.post<{ id: string; status: PassStatus }>(`/api/passes/${encodeURIComponent(passId)}/retry`)

// ---- the GM's review of outcomes (the secret guard holds what may reveal a secret) ----

const outcomeUrl = (id: string) => `/api/outcomes/${encodeURIComponent(id)}`
/** Release a held outcome: everyone reads it now, and what waited for it follows. */
export const releaseOutcome = (id: string) => http.post<Outcome>(`${outcomeUrl(id)}/release`)
/** Rewrite an outcome's texts (recorded with who and when). */
export const editOutcome = (id: string, input: OutcomeEditInput) => http.patch<Outcome>(outcomeUrl(id), input)
/** Throw a held outcome away and run its pass again. */
export const regenerateOutcome = (id: string) => http.post<OutcomeRegenerated>(`${outcomeUrl(id)}/regenerate`)

// ---- liquid ----

/** Table talk: out of character, to everyone at the table; no pass reads it. */
export const sayAtTable = (frameId: string, text: string) => http.post<TalkMessage>(`${one(frameId)}/talk`, { text })

/** An intention for `seat`; or, with `face` author or designer, writing for the world or a skill (no seat). */
export const submitLiquid = (frameId: string, seat: string | null, content: string, face: Face = 'player') =>
  face === 'player' ? http.post<Liquid>(`${one(frameId)}/liquid`, { seat, content }) : http.post<Liquid>(`${one(frameId)}/liquid`, { content, face })

const liquidUrl = (id: string) => `/api/liquid/${encodeURIComponent(id)}`
/** Rewrite a submitted intention (its soft pass reads it again). The GM's edit of an AI seat's held intention makes the words the GM's; it stays held until released. */
export const editLiquid = (id: string, content: string) => http.patch<Liquid>(liquidUrl(id), { content })
export const withdrawLiquid = (id: string) => http.delete(liquidUrl(id))
/** Commit an intention (its window opens). For an AI seat's intention the secret guard holds, the GM's release: everyone who may read liquid then reads it. */
export const commitLiquid = (id: string) => http.post<Liquid>(`${liquidUrl(id)}/commit`)
/** GM: throw away what an AI seat intends (a held one, say) and let it act again (204; the socket brings `liquid.withdrawn`, then its new `liquid.created`). */
export const regenerateLiquid = (id: string) => http.post<void>(`${liquidUrl(id)}/regenerate`)

// ---- links ----

/** The frame's websocket, on the page's own host. */
export function frameSocketUrl(id: string, loc: Pick<Location, 'protocol' | 'host'> = window.location): string {
  const scheme = loc.protocol === 'https:' ? 'wss:' : 'ws:'
  return `${scheme}//${loc.host}/ws/frames/${encodeURIComponent(id)}/`
}

/** The link a GM sends players (the SPA's /join route). */
export const inviteLink = (code: string, origin: string = window.location.origin) =>
  `${origin}/join/${encodeURIComponent(code)}`


/** The link a GM hands to spectators: the outcomes only. */
export const spectateLink = (code: string, origin: string = window.location.origin) =>
  `${origin}/watch/${encodeURIComponent(code)}`
// ---- bans ----

/** GM: the players kicked from the frame, who cannot take a seat in it until allowed back (oldest first). */
export const listBans = (frameId: string) => http.get<FrameBan[]>(`${one(frameId)}/bans`)

/** GM: let a kicked player back (404 when they are not banned from this frame). */
export const liftBan = (frameId: string, userId: number) => http.delete(`${one(frameId)}/bans/${userId}`)

/** The GM adds world content; everyone at the table is told (`content.added`). */
export const addContent = (frameId: string, input: ContentInput) => http.post<ContentEntry>(`${one(frameId)}/content`, input)
/** The GM changes an entry; the edit is recorded (`content.edited`). */
export const editContent = (frameId: string, id: string, input: Partial<ContentInput>) =>
  http.patch<ContentEntry>(`${one(frameId)}/content/${encodeURIComponent(id)}`, input)
