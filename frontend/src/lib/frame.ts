/**
 * A frame as one reader holds it: built from a snapshot (GET /api/frames/{id}) and moved by
 * the socket's events, immutably (each change returns a new state, so tests can compare an
 * old snapshot plus its events with a fresh one). Also countdowns, pscale meanings and the
 * feed's order. No Vue, no I/O.
 */
import type { InjectionKey, Ref } from 'vue'
import type {
  Face,
  FrameMessage,
  FrameView,
  FrameWindow,
  Liquid,
  LiquidStatus,
  Narrative,
  Outcome,
  PassSummary,
  Seat,
  SpectatorView,
  TalkMessage,
  ContentEntry,
  WindowStatus,
} from '@/api/types'

export type FrameInfo = Omit<FrameView, 'seq' | 'seats' | 'liquid' | 'outcomes' | 'narratives' | 'windows' | 'talk' | 'content'>

export interface FrameState {
  info: FrameInfo
  /** The last frame-wide event this state holds. */
  seq: number
  seats: Seat[]
  /** Live liquid by id (withdrawn rows leave). */
  liquid: Record<string, Liquid>
  /** Ordered by seq. */
  outcomes: Outcome[]
  narratives: Record<string, Narrative>
  /** Live windows only (open, firing, failed), like the snapshot. */
  windows: Record<string, FrameWindow>
  /** Known only from `pass.failed` events (snapshots do not list passes), by pass id. */
  failedPasses: Record<string, PassSummary>
  /** Seat → the window an interrupt cancelled, until that seat's narrative arrives. */
  interrupted: Record<string, string>
  /** Table talk, oldest first. */
  talk: TalkMessage[]
  /** World content, oldest first (an edit keeps its place). */
  content: ContentEntry[]
  /** Seat → how many `state.changed` were heard: a state drawer re-reads when it moves. */
  stateChanged?: Record<string, number>
}

/** What applying one event did: the new state, and whether the state must be re-read. */
export interface Applied {
  state: FrameState
  resync: boolean
}

/** The longest intention the server takes (synthesis/models.py LIQUID_MAX; tests/synthesis/test_limits.py keeps them equal). */
export const LIQUID_MAX = 4000

/** A seat's call waiting for its model's server (`model.waiting`), and how many go first. */
export type ModelWaits = Record<string, { step: string; ahead: number }>
/** The frame pages provide their store's waits; a window's badge shows its seat's. */
export const MODEL_WAITS: InjectionKey<Ref<ModelWaits>> = Symbol('model-waits')

export const LIVE_WINDOWS: readonly WindowStatus[] = ['open', 'firing', 'failed']
const byId = <T extends { id: string }>(rows: T[]): Record<string, T> => Object.fromEntries(rows.map((r) => [r.id, r]))

export function fromSnapshot(view: FrameView): FrameState {
  const { seq, seats, liquid, outcomes, narratives, windows, talk, content, ...info } = view
  return {
    info,
    seq,
    seats: [...seats],
    liquid: byId(liquid.filter((l) => l.status !== 'withdrawn')),
    outcomes: [...outcomes].sort((a, b) => a.seq - b.seq),
    narratives: byId(narratives),
    windows: byId(windows.filter((w) => LIVE_WINDOWS.includes(w.status))),
    failedPasses: {},
    interrupted: {},
    talk: [...talk],
    content: [...content],
  }
}

/** A spectator's snapshot as frame state: no seat, no liquid, no narrative, no talk. */
export function fromSpectatorView(view: SpectatorView): FrameState {
  const { production_name: _p, ...rest } = view
  return fromSnapshot({
    ...rest,
    production: '',
    liquid_visibility: 'gm',
    player_faces: [],
    leak_guard: 'hold',
    second_opinion: false,
    is_gm: false,
    my_seats: [],
    invite_code: null,
    spectator_code: null,
    liquid_flags: null,
    liquid: [],
    narratives: [],
    narrators: {},
    talk: [],
    content: [],
  })
}

/**
 * A fresh snapshot over the local state. A streaming narrative's stored text lags its live
 * deltas (checkpointed every ~250 ms) and a narrative's id names one run, so the longer
 * local text of the same id is kept: deltas are never lost nor doubled. What snapshots do
 * not carry (pass failures, interrupts) is kept while still relevant.
 */
export function mergeSnapshot(local: FrameState | null, view: FrameView): FrameState {
  const fresh = fromSnapshot(view)
  if (!local || local.info.id !== view.id) return fresh
  for (const n of Object.values(fresh.narratives)) {
    const old = local.narratives[n.id]
    if (old && n.status === 'streaming' && old.status === 'streaming' && old.token_count > n.token_count) {
      fresh.narratives[n.id] = { ...n, text: old.text, token_count: old.token_count }
    }
  }
  // A failure stays while its seat still has a failed window, or no window at all (a pass
  // an interrupt started has none); a seat whose windows all run again was retried.
  const live = Object.values(fresh.windows)
  const stillFailed = (seat: string) => {
    const mine = live.filter((w) => w.seat === seat)
    return !mine.length || mine.some((w) => w.status === 'failed')
  }
  fresh.failedPasses = Object.fromEntries(Object.entries(local.failedPasses).filter(([, p]) => p.seat !== null && stillFailed(p.seat)))
  fresh.interrupted = { ...local.interrupted }
  // A re-read may have missed a `state.changed`: the drawers read again.
  fresh.stateChanged = Object.fromEntries(Object.entries(local.stateChanged ?? {}).map(([seat, n]) => [seat, n + 1]))
  return fresh
}

/** The next delta index expected for a narrative: Infinity once finished, undefined if unknown. */
export function narrativePosition(state: FrameState | null, id: string): number | undefined {
  const n = state?.narratives[id]
  if (!n) return undefined
  return n.status === 'streaming' ? n.token_count : Infinity
}

const without = <T>(record: Record<string, T>, key: string): Record<string, T> => {
  if (!(key in record)) return record
  const next = { ...record }
  delete next[key]
  return next
}
/** The GM's guard flags without those of one liquid (the same info when it had none). */
function withoutFlags(info: FrameInfo, liquidId: string): FrameInfo {
  const flags = info.liquid_flags
  return flags && liquidId in flags ? { ...info, liquid_flags: without(flags, liquidId) } : info
}
const withoutSeat = <T extends { seat: string | null }>(record: Record<string, T>, seat: string) =>
  Object.fromEntries(Object.entries(record).filter(([, v]) => v.seat !== seat))

function setWindow(state: FrameState, w: FrameWindow): Record<string, FrameWindow> {
  return LIVE_WINDOWS.includes(w.status) ? { ...state.windows, [w.id]: w } : without(state.windows, w.id)
}

/** Freeze every counting window locally (the server keeps each one's time left). */
export function freezeWindows(windows: Record<string, FrameWindow>, now: number): Record<string, FrameWindow> {
  return Object.fromEntries(
    Object.entries(windows).map(([id, w]) =>
      w.status === 'open' && w.expires_at
        ? [id, { ...w, expires_at: null, remaining_seconds: Math.max(0, (Date.parse(w.expires_at) - now) / 1000) }]
        : [id, w],
    ),
  )
}

/** Give every frozen window its time back from `now`. */
export function thawWindows(windows: Record<string, FrameWindow>, now: number): Record<string, FrameWindow> {
  return Object.fromEntries(
    Object.entries(windows).map(([id, w]) =>
      w.status === 'open' && !w.expires_at && w.remaining_seconds !== null
        ? [id, { ...w, expires_at: new Date(now + w.remaining_seconds * 1000).toISOString(), remaining_seconds: null }]
        : [id, w],
    ),
  )
}

/**
 * Apply one in-order event. `resync` asks for a re-read: a delta past a hole, or a pause /
 * resume that did not say where the windows stand (frozen or thawed locally meanwhile, so
 * the countdowns stop at once).
 */
export function applyEvent(state: FrameState, msg: FrameMessage, now: number = Date.now()): Applied {
  const seq = 'seq' in msg && typeof msg.seq === 'number' ? Math.max(state.seq, msg.seq) : state.seq
  const done = (next: Partial<FrameState>, resync = false): Applied => ({ state: { ...state, ...next, seq }, resync })
  switch (msg.type) {
    case 'liquid.created':
    case 'liquid.updated':
    case 'liquid.analyzed':
    case 'liquid.committed':
    case 'liquid.consumed':
    case 'liquid.failed':
      return done({ liquid: { ...state.liquid, [msg.liquid.id]: msg.liquid } })
    case 'liquid.withdrawn':
      // A GM's regenerate withdraws an AI seat's held intention (a new one follows): its
      // flags go with it, as a fresh snapshot has none for a withdrawn row.
      return done({ liquid: without(state.liquid, msg.liquid.id), info: withoutFlags(state.info, msg.liquid.id) })
    case 'window.opened':
      return done({ windows: setWindow(state, msg.window), interrupted: without(state.interrupted, msg.window.seat) })
    case 'window.fired':
      // A retry moves a failed window to firing: its failure is over.
      return done({ windows: setWindow(state, msg.window), failedPasses: withoutSeat(state.failedPasses, msg.window.seat) })
    case 'window.cancelled': {
      // An interrupt's cancel is told to its player (they react now); the GM's is not (the
      // intention goes back to its player, submitted again).
      const w = msg.window
      const interrupted = msg.cause?.kind === 'interrupt' ? { ...state.interrupted, [w.seat]: w.id } : without(state.interrupted, w.seat)
      return done({ windows: setWindow(state, w), interrupted })
    }
    case 'window.done':
    case 'window.failed':
      return done({ windows: setWindow(state, msg.window) })
    case 'outcome.created':
      if (state.outcomes.some((o) => o.id === msg.outcome.id)) return done({})
      return done({ outcomes: [...state.outcomes, msg.outcome].sort((a, b) => a.seq - b.seq) })
    case 'outcome.released':
    case 'outcome.edited': {
      // Released: now everyone's, whole (a spectator's first sight of it). Edited: its new
      // text (the GM's while held, with its flags; everyone's once released, the GM's
      // flags kept until `outcome.flagged` follows).
      const known = state.outcomes.find((o) => o.id === msg.outcome.id)
      if (!known) return done({ outcomes: [...state.outcomes, msg.outcome].sort((a, b) => a.seq - b.seq) })
      const next = { ...known, ...msg.outcome }
      return done({ outcomes: state.outcomes.map((o) => (o.id === next.id ? next : o)) })
    }
    case 'frame.rewound':
    case 'frame.restored':
      // The GM rewound the story (or restored a rewind): what was read may be gone or back. Re-read.
      return done({}, true)
    case 'outcome.discarded':
      // The GM regenerates a held outcome: its placeholder goes; its pass runs again.
      return done({ outcomes: state.outcomes.filter((o) => o.id !== msg.outcome) })
    case 'outcome.flagged':
      // The guard's warnings (GM only), after the outcome itself; an unknown outcome comes with the next re-read.
      if (!state.outcomes.some((o) => o.id === msg.outcome)) return done({})
      return done({ outcomes: state.outcomes.map((o) => (o.id === msg.outcome ? { ...o, flags: msg.flags } : o)) })
    case 'liquid.flagged':
      // An AI seat's intention repeats a secret (GM only): kept beside the liquid, like the snapshot's.
      return done({ info: { ...state.info, liquid_flags: { ...(state.info.liquid_flags ?? {}), [msg.liquid]: msg.flags } } })
    case 'seat.changed': {
      const at = state.seats.findIndex((s) => s.id === msg.seat.id)
      const seats = at >= 0 ? state.seats.map((s, i) => (i === at ? msg.seat : s)) : [...state.seats, msg.seat]
      return done({ seats })
    }
    case 'frame.paused':
    case 'frame.closed':
    case 'frame.resumed': {
      const info = { ...state.info, status: msg.status }
      // Freeze or thaw here at once; the server's own numbers, when it sends them, win.
      let windows = msg.type === 'frame.resumed' ? thawWindows(state.windows, now) : freezeWindows(state.windows, now)
      if (!msg.windows) return done({ info, windows }, true)
      for (const w of msg.windows) windows = setWindow({ ...state, windows }, w)
      return done({ info, windows })
    }
    case 'frame.updated': {
      // The GM's settings. Models are the GM's only (not in the event): the GM re-reads.
      // Another visibility changes which intentions a player may read: re-read too.
      const { name, tempo, liquid_visibility, player_faces } = msg.frame
      const reread = state.info.is_gm || liquid_visibility !== state.info.liquid_visibility
      return done({ info: { ...state.info, name, tempo, liquid_visibility, player_faces } }, reread)
    }
    case 'content.added':
    case 'content.edited': {
      const known = state.content.some((c) => c.id === msg.content.id)
      return done({
        content: known ? state.content.map((c) => (c.id === msg.content.id ? msg.content : c)) : [...state.content, msg.content],
      })
    }
    case 'talk.created':
      if (state.talk.some((t) => t.id === msg.talk.id)) return done({})
      return done({ talk: [...state.talk, msg.talk] })
    case 'pass.failed':
      return done({ failedPasses: { ...state.failedPasses, [msg.pass.id]: msg.pass } })
    case 'narrative.token': {
      const old = state.narratives[msg.solid]
      if (!old) {
        // The first delta of a new run announces it; a later one means we missed its start.
        if (msg.index !== 0) return done({}, true)
        const mine = state.info.my_seats.includes(msg.seat)
        const created: Narrative = {
          id: msg.solid,
          user: null, // who played the seat: known once it is stored
          seat: msg.seat,
          text: msg.delta,
          token_count: 1,
          outcome_ids: [],
          liquid_ids: [],
          trigger: '',
          pscale: 0,
          status: 'streaming',
          created_at: '', // not known until it is stored: the feed shows it last
          // A player only hears another seat's stream when it is the frame's shared prose.
          shared: msg.shared ?? (!state.info.is_gm && !mine),
        }
        return done({ narratives: { ...state.narratives, [created.id]: created } })
      }
      if (old.status !== 'streaming' || msg.index < old.token_count) return done({})
      if (msg.index > old.token_count) return done({}, true)
      const next = { ...old, text: old.text + msg.delta, token_count: msg.index + 1 }
      return done({ narratives: { ...state.narratives, [old.id]: next } })
    }
    case 'state.changed':
      return done({ stateChanged: { ...state.stateChanged, [msg.seat]: (state.stateChanged?.[msg.seat] ?? 0) + 1 } })
    case 'narrative.restarted':
      // Its pass is written again from the start (a dead worker, a retry), under a new id
      // whose first delta follows: the old run's text goes, never joined to the new one's.
      return done({ narratives: without(state.narratives, msg.solid) })
    case 'narrative.done': {
      const n = msg.narrative
      return done({
        narratives: { ...state.narratives, [n.id]: n },
        failedPasses: withoutSeat(state.failedPasses, n.seat),
        interrupted: without(state.interrupted, n.seat),
      })
    }
    default:
      return done({})
  }
}

// ---------- reading the state ----------

export const seatById = (state: FrameState, id: string): Seat | undefined => state.seats.find((s) => s.id === id)
export const seatName = (state: FrameState, id: string): string => seatById(state, id)?.name ?? 'Someone'

const ACTIVE_LIQUID: readonly LiquidStatus[] = ['submitted', 'committed']

/**
 * A seat's intentions still in play (submitted or committed), oldest first. An author's or
 * designer's writing is no intention: the feed shows it (`feedEntries`).
 */
export function pendingLiquid(state: FrameState, seat?: string): Liquid[] {
  return Object.values(state.liquid)
    .filter((l) => l.face === 'player' && ACTIVE_LIQUID.includes(l.status) && (seat === undefined || l.seat === seat))
    .sort((a, b) => (a.submitted_at < b.submitted_at ? -1 : a.submitted_at > b.submitted_at ? 1 : 0))
}

/** The seat's current window: the open one, else the newest firing or failed one. */
export function seatWindow(state: FrameState, seat: string): FrameWindow | undefined {
  const mine = Object.values(state.windows).filter((w) => w.seat === seat)
  return mine.find((w) => w.status === 'open') ?? mine.sort((a, b) => (a.opened_at < b.opened_at ? 1 : -1))[0]
}

/** Why a seat's window ended early: the newest outcome naming it as an interrupt target. */
export function interruptReason(state: FrameState, seat: string): string | null {
  for (let i = state.outcomes.length - 1; i >= 0; i--) {
    const hit = state.outcomes[i]?.interrupts.find((x) => x.seat === seat)
    if (hit) return hit.reason || 'Something happened to them.'
  }
  return null
}

/** A seat's pass failed and waits for the GM: the reason when this reader may read it. */
export function seatFailure(state: FrameState, seat: string): { error: string } | null {
  const passes = Object.values(state.failedPasses).filter((p) => p.seat === seat)
  const failedWindow = Object.values(state.windows).some((w) => w.seat === seat && w.status === 'failed')
  if (!passes.length && !failedWindow) return null
  return { error: passes.map((p) => p.error).find((e) => !!e) ?? '' }
}

/** An outcome held for the GM's review (the secret guard flagged it): players hold an empty placeholder until the GM releases it. */
export const outcomeHeld = (o: Outcome): boolean => o.held

/** A guard's flag as one line: what kind of secret, whose, the words it repeats, and "(second opinion)" when the model's check found it rather than the word test. */
export function flagLine(f: { kind: string; owner: string; excerpt: string; source?: string }): string {
  const what = f.excerpt ? `“${f.excerpt}”` : ''
  const by = f.source === 'second_opinion' ? '(second opinion)' : ''
  return [f.kind.replaceAll('_', ' '), f.owner ? `of ${f.owner}` : '', what, by].filter(Boolean).join(' ')
}

/** Whether this reader may read the liquid's text (it arrives without it otherwise). */
export const liquidReadable = (l: Liquid): boolean => typeof l.content === 'string'

/**
 * An AI seat's intention the secret guard holds for the GM's review (docs/play-pages.md):
 * submitted until the GM releases (commits) it, edits it or has it regenerated. Only the GM
 * reads its words; the others know only that its character is about to act.
 */
export const liquidHeld = (l: Liquid): boolean => l.held && l.status === 'submitted'

/** The soft pass has not answered this revision yet. */
export const analysisPending = (l: Liquid): boolean => l.status === 'submitted' && !l.analysis_source

// ---------- time ----------

/** Seconds left on a window at `now`; frozen windows keep theirs; null when not counting. */
export function remainingSeconds(w: FrameWindow, now: number): number | null {
  if (w.status !== 'open') return null
  if (w.expires_at) return Math.max(0, (Date.parse(w.expires_at) - now) / 1000)
  return w.remaining_seconds
}

export const isFrozen = (w: FrameWindow): boolean => w.status === 'open' && !w.expires_at

/** 7 → "7 s", 83 → "1:23", 3720 → "1 h 02 min". */
export function formatCountdown(seconds: number): string {
  const s = Math.max(0, Math.ceil(seconds))
  if (s < 60) return `${s} s`
  if (s < 3600) return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`
}

/** The window a commit of this liquid opens, in real seconds (0: fires at once). */
export function windowLength(l: Liquid, frame: Pick<FrameInfo, 'mode' | 'tempo'>): number | null {
  if (frame.mode === 'shared' || frame.tempo === 0) return 0
  return l.window_seconds === null ? null : l.window_seconds * frame.tempo
}

// ---------- pscale ----------

const PSCALE: Record<number, string> = {
  [-3]: 'about a second',
  [-2]: 'about ten seconds',
  [-1]: 'about a minute',
  0: '5–10 minutes',
  1: 'about an hour',
  2: 'about a day',
}

/** An action's time scale: "−1" and what it means ("about a minute"). */
export function pscaleInfo(p: number): { label: string; meaning: string } {
  const label = p > 0 ? `+${p}` : p < 0 ? `−${-p}` : '0'
  return { label, meaning: PSCALE[p] ?? (p < -3 ? 'an instant' : 'longer than a day') }
}

// ---------- the feed ----------

export type FeedEntry =
  /** `number`: the outcome's place in the frame (1, 2, 3… by seq), what readers see; seq stays for syncing. */
  | { kind: 'outcome'; key: string; at: string; outcome: Outcome; number: number }
  | { kind: 'narrative'; key: string; at: string; narrative: Narrative }
  /** An author's or designer's writing: what it asks for, its pass's state, what it made. */
  | { kind: 'writing'; key: string; at: string; liquid: Liquid }

/**
 * Outcomes and narratives in time order. Bones come before the flesh written from them
 * (at one instant, the outcome first); a narrative not stored yet (created_at '') goes last.
 */
export function feedEntries(state: FrameState): FeedEntry[] {
  const entries: FeedEntry[] = [
    // state.outcomes is kept in seq order: its index is the outcome's number in the frame.
    ...state.outcomes.map((o, i) => ({ kind: 'outcome' as const, key: `o:${o.id}`, at: o.created_at, outcome: o, number: i + 1 })),
    ...Object.values(state.narratives).map((n) => ({ kind: 'narrative' as const, key: `n:${n.id}`, at: n.created_at, narrative: n })),
    ...Object.values(state.liquid)
      .filter((l) => l.face !== 'player' && l.status !== 'withdrawn')
      .map((l) => ({ kind: 'writing' as const, key: `w:${l.id}`, at: l.committed_at ?? l.submitted_at, liquid: l })),
  ]
  const rank = (e: FeedEntry) => (e.kind === 'outcome' ? 0 : e.kind === 'narrative' ? 1 : 2)
  return entries.sort((a, b) => {
    if (a.at !== b.at) {
      if (!a.at) return 1
      if (!b.at) return -1
      return a.at < b.at ? -1 : 1
    }
    if (rank(a) !== rank(b)) return rank(a) - rank(b)
    if (a.kind === 'outcome' && b.kind === 'outcome') return a.outcome.seq - b.outcome.seq
    return a.key < b.key ? -1 : 1
  })
}

/** The reader's story so far: the narratives they read (a player's own seats' and a shared frame's; the GM's every one), in the feed's order, those with text. */
export function storySoFar(state: FrameState): Narrative[] {
  return feedEntries(state).flatMap((e) => (e.kind === 'narrative' && e.narrative.text.trim() ? [e.narrative] : []))
}

// ---------- presence ----------

/** How long a "typing…" lasts without a new vapor (senders repeat it every few seconds). */
export const TYPING_TTL_MS = 6000

/**
 * How long an AI seat's "thinking…" lasts without its end: the server says it once when its
 * assistant starts writing and once when it is done (a model may take a minute); this only
 * clears it should the end never come.
 */
export const AI_THINKING_TTL_MS = 180_000

/**
 * Seats typing (a player) or thinking (an AI seat, among `aiSeats`) at `now`, from the last
 * time each was heard so.
 */
export function typingSeats(
  heard: Record<string, number>,
  now: number,
  ttl = TYPING_TTL_MS,
  aiSeats: ReadonlySet<string> = new Set(),
): Set<string> {
  return new Set(
    Object.entries(heard)
      .filter(([seat, at]) => now - at < (aiSeats.has(seat) ? AI_THINKING_TTL_MS : ttl))
      .map(([seat]) => seat),
  )
}

/** The AI-played seats: theirs is "thinking", not "typing". */
export function aiSeatIds(seats: readonly Seat[]): Set<string> {
  return new Set(seats.filter((s) => s.controller === 'ai').map((s) => s.id))
}

// ---------- local writes ----------

const LIQUID_STAGE: Record<LiquidStatus, number> = { submitted: 0, committed: 1, consumed: 2, withdrawn: 2 }

/**
 * Whether a REST answer's copy of a liquid may replace the one held: a POST's answer can
 * arrive after the socket brought a newer state of the same row (its analysis, a commit),
 * and must not move it back.
 */
export function isNewerLiquid(held: Liquid | undefined, next: Liquid): boolean {
  if (!held) return true
  if (LIQUID_STAGE[next.status] !== LIQUID_STAGE[held.status]) return LIQUID_STAGE[next.status] > LIQUID_STAGE[held.status]
  if (next.revision !== held.revision) return next.revision > held.revision
  return !held.analysis_source || !!next.analysis_source
}

/** Put a liquid from a REST answer into the state, unless the state holds a newer copy. */
export function withLocalLiquid(state: FrameState, l: Liquid): FrameState {
  if (!isNewerLiquid(state.liquid[l.id], l)) return state
  if (l.status === 'withdrawn') return { ...state, liquid: without(state.liquid, l.id), info: withoutFlags(state.info, l.id) }
  return { ...state, liquid: { ...state.liquid, [l.id]: l } }
}

// ---------- what a player is told ----------

/** How a frame's mode is said on its pages: a shared story is one prose everyone reads. */
export interface ModeWords {
  /** The badge ("shared story" / "own stories"). */
  badge: string
  /** The badge's title. */
  title: string
  /** A first-time player's page before anything happened. */
  start: string
  /** The invite page, over the seats to choose from. */
  choose: string
}

export function modeWords(mode: FrameInfo['mode']): ModeWords {
  if (mode === 'shared') {
    return {
      badge: 'shared story',
      title: 'Everyone reads the same prose',
      start: 'Write what your character does. When you commit, the scene moves on at once: everyone sees what happened and reads the same story.',
      choose: 'Choose the character you will play. Everyone at the table reads one shared story.',
    }
  }
  return {
    badge: 'own stories',
    title: 'Each character gets their own story',
    start: 'Write what your character does. When you commit, your window opens; when it closes, everyone sees what happened and you read your own story.',
    choose: 'Choose the character you will play. You will read only their story.',
  }
}

/** Why a frame's socket closed for good with 4404, as its pages say it. */
export interface FrameEnd {
  kind: 'ended' | 'deleted'
  title: string
  text: string
}

/**
 * The frame ended for good (its socket closed with 4404): the GM closed the scene, which
 * stays readable, or it was deleted (with its production, or its GM's account). `missing`:
 * a read after the close found no frame (404).
 */
export function frameEnd(state: FrameState | null, opts: { missing?: boolean } = {}): FrameEnd {
  if (state?.info.status === 'closed' && !opts.missing) {
    return { kind: 'ended', title: 'This scene has ended', text: 'The GM closed it for good. You can still read it here; nothing more will happen in it.' }
  }
  return { kind: 'deleted', title: 'This scene was deleted', text: 'It no longer exists. What you see here is where it stood; nothing more will arrive.' }
}

export interface Notice {
  key: string
  tone: 'info' | 'warning' | 'danger'
  text: string
}

/** `text` as one sentence: trimmed, ending with a full stop if it ends with none. */
const sentence = (text: string): string => {
  const t = text.trim()
  return t && !/[.!?…]["”’]?$/.test(t) ? `${t}.` : t
}

/** The banners over a player's page, most serious first. */
export function playerNotices(state: FrameState, opts: { accessEnded: boolean }): Notice[] {
  const out: Notice[] = []
  const seat = state.info.my_seats[0]
  const mine = seat ? seatById(state, seat) : undefined
  if (opts.accessEnded || (mine && mine.controller !== 'human')) {
    out.push({
      key: 'removed',
      tone: 'danger',
      text: 'You are no longer in this frame: the GM opened your seat or gave it to someone else. Nothing more will arrive here.',
    })
  }
  if (state.info.status === 'closed') {
    out.push({ key: 'closed', tone: 'info', text: 'This scene is closed. You can read it, but nothing more can be written.' })
  } else if (state.info.status === 'paused') {
    out.push({
      key: 'paused',
      tone: 'warning',
      text: 'The GM paused the scene: every countdown is frozen. You can still write and commit; windows run again when play resumes.',
    })
  }
  if (seat && state.interrupted[seat]) {
    const why = interruptReason(state, seat)
    const said = why ? `: ${why}` : ''
    out.push({
      key: 'interrupted',
      tone: 'warning',
      text: `Your window ended early${said}${/[.!?…]["”’]?$/.test(said) ? '' : '.'} Your character reacts now.`,
    })
  }
  const failure = seat ? seatFailure(state, seat) : null
  if (failure) {
    out.push({
      key: 'failed',
      tone: 'danger',
      // A player is sent a generic reason; the real one (which may name the model's
      // endpoint or quote its answer) is on the GM's passes list.
      text: `${sentence(failure.error) || 'Your scene could not be written; the GM can retry it.'} Nothing you wrote is lost: your intention waits.`,
    })
  }
  return out
}

// ---------- faces ----------

/** The faces this reader may write in: the GM every one; a player `player` and those the GM opened. */
export function facesFor(info: Pick<FrameInfo, 'is_gm' | 'player_faces'>, seated: boolean): Face[] {
  const extra: Face[] = info.is_gm ? ['author', 'designer'] : [...info.player_faces]
  return seated ? ['player', ...extra] : extra
}

/** Where an author's or designer's writing stands, as the feed says it. */
export type WritingState = 'draft' | 'working' | 'failed' | 'done'

export function writingState(l: Liquid): WritingState {
  if (l.status === 'submitted') return 'draft'
  if (l.status === 'consumed') return 'done'
  return l.result?.error ? 'failed' : 'working'
}
