/**
 * The frame on screen (player's or GM's page): its state, kept in step by the page's live
 * socket (`load` is the socket's re-read, `apply` takes each in-order event,
 * `narrativePosition` says which delta of a stream comes next), and the actions on it.
 */
import { defineStore } from 'pinia'
import { computed, ref, shallowRef } from 'vue'
import * as api from '@/api/frames'
import { ApiError } from '@/api/http'
import type { ContentEntry, Face, FrameMessage, FrameUpdateInput, FrameWindow, Liquid, PassInfo, SceneItem, Seat, SeatUpdateInput } from '@/api/types'
import {
  applyEvent,
  feedEntries,
  mergeSnapshot,
  narrativePosition as positionIn,
  pendingLiquid,
  seatFailure,
  seatName,
  seatWindow,
  withLocalLiquid,
  type FrameState,
  type ModelWaits,
} from '@/lib/frame'
import { withScenes } from '@/lib/scenes'
import { useToastsStore } from './toasts'

/** Snapshots that may lack a stream before its deltas are taken as stale (a deleted run's). */
const GHOST_AFTER = 2
/**
 * A narrative streaming with no word for this long is re-read: the server fails a stream
 * silent for 30 s (its between-token timeout), so by now it ended, and its end was an event
 * this page did not get (pub/sub delivers at most once).
 */
export const STALLED_AFTER_MS = 45_000

export const useFrameStore = defineStore('frame', () => {
  const toasts = useToastsStore()

  const frameId = ref<string | null>(null)
  const state = shallowRef<FrameState | null>(null)
  const loading = ref(false)
  const loadError = ref<ApiError | null>(null)
  /** Seat → when it was last heard typing (presence is ephemeral: never in a snapshot). */
  const typing = ref<Record<string, number>>({})
  /** Seat → its call waiting for the model's server, and how many go first (ephemeral too). */
  const waiting = ref<ModelWaits>({})
  /** Seats whose player has a socket open now (sockets greet each other; never in a snapshot). */
  const online = ref<Set<string>>(new Set())
  /** The action in flight ('submit', 'commit:<id>', 'pause'…), to disable its button. */
  const busy = ref<string | null>(null)
  const passes = ref<PassInfo[]>([])
  const passesLoading = ref(false)
  const passesError = ref<ApiError | null>(null)
  // Streams heard of but missing from snapshots: id → how many snapshots lacked them.
  const ghosts = new Map<string, number>()
  /** Stream → when this page last heard of it (`stalled`). */
  const heard = new Map<string, number>()

  const info = computed(() => state.value?.info ?? null)
  const seats = computed<Seat[]>(() => state.value?.seats ?? [])
  const isGm = computed(() => !!state.value?.info.is_gm)
  /** A player holds at most one seat per frame. */
  const mySeatId = computed(() => state.value?.info.my_seats[0] ?? null)
  const mySeat = computed(() => seats.value.find((s) => s.id === mySeatId.value) ?? null)
  /** The frame's scenes with the summaries I may read (GET …/scenes), re-read on each scene event. */
  const scenes = ref<SceneItem[]>([])
  const feed = computed(() => (state.value ? feedEntries(state.value) : []))
  /** The feed with a divider where each scene after the first opens. */
  const feedWithScenes = computed(() => withScenes(feed.value, scenes.value))
  /** Readings of one seat, for the pages' templates. */
  const nameOf = (seat: string) => (state.value ? seatName(state.value, seat) : 'Someone')
  const windowOf = (seat: string) => (state.value ? seatWindow(state.value, seat) : undefined)
  const failed = (seat: string) => !!(state.value && seatFailure(state.value, seat))
  const myLiquid = computed(() => (state.value && mySeatId.value ? pendingLiquid(state.value, mySeatId.value) : []))
  const othersLiquid = computed(() =>
    state.value ? pendingLiquid(state.value).filter((l) => l.seat !== mySeatId.value) : [],
  )

  function reset(id: string | null) {
    frameId.value = id
    state.value = null
    typing.value = {}
    waiting.value = {}
    passes.value = []
    passesError.value = null
    scenes.value = []
    ghosts.clear()
    heard.clear()
  }

  /** Read the scenes (after each load and scene event); a failure keeps the last list. */
  async function loadScenes(): Promise<void> {
    const id = frameId.value
    if (!id) return
    try {
      const list = await api.getScenes(id)
      if (frameId.value === id) scenes.value = list.scenes
    } catch {
      // The feed works without dividers; the next scene event reads them again.
    }
  }

  /** Read the frame (first load and every re-read); resolves with the snapshot's `seq`. */
  async function load(id: string): Promise<number> {
    if (frameId.value !== id) reset(id)
    loading.value = true
    loadError.value = null
    try {
      const view = await api.getFrame(id)
      if (frameId.value === id) {
        state.value = mergeSnapshot(state.value, view)
        for (const [stream, misses] of ghosts) {
          if (state.value.narratives[stream]) ghosts.delete(stream)
          else ghosts.set(stream, misses + 1)
        }
      }
      void loadScenes()
      return view.seq
    } catch (e) {
      if (frameId.value === id) loadError.value = e instanceof ApiError ? e : new ApiError(0, String(e))
      throw e
    } finally {
      loading.value = false
    }
  }

  /** Apply one in-order socket event; false asks the socket to re-read. */
  function apply(msg: FrameMessage): boolean {
    // The GM's socket asking who is here: the players' sockets answer, the server does it.
    if (msg.type === 'presence.ask') return true
    if (msg.type === 'presence' && msg.online !== undefined) {
      const next = new Set(online.value)
      if (msg.online) next.add(msg.seat)
      else next.delete(msg.seat)
      online.value = next
      return true
    }
    if (msg.type === 'model.waiting') {
      const key = msg.seat ?? ''
      const next = { ...waiting.value }
      if (msg.ahead > 0) next[key] = { step: msg.step, ahead: msg.ahead }
      else delete next[key]
      waiting.value = next
      return true
    }
    if (msg.type === 'presence') {
      const next = { ...typing.value }
      if (msg.typing) next[msg.seat] = Date.now()
      else delete next[msg.seat]
      typing.value = next
      return true
    }
    // Scenes live beside the state (their summaries are per reader): read them again.
    if (msg.type === 'scene.opened' || msg.type === 'scene.closed' || msg.type === 'scene.summarized') void loadScenes()
    if (msg.type === 'scene.summarized') return true
    if (!state.value) return false
    // A restarted narrative's old run may still send a late delta: dropped, never a new stream.
    if (msg.type === 'narrative.restarted') ghosts.set(msg.solid, GHOST_AFTER)
    const { state: next, resync } = applyEvent(state.value, msg)
    state.value = next
    if (msg.type === 'narrative.token') heard.set(msg.solid, Date.now())
    if (msg.type === 'narrative.token' || msg.type === 'narrative.done') {
      const seat = msg.seat
      if (typing.value[seat]) typing.value = Object.fromEntries(Object.entries(typing.value).filter(([s]) => s !== seat))
    }
    return !resync
  }

  /**
   * The next delta index of a narrative stream. A stream not held yet starts at 0 (its first
   * delta creates it); one that snapshots keep lacking belonged to a run that is gone.
   */
  function narrativePosition(id: string): number | undefined {
    const at = positionIn(state.value, id)
    if (at !== undefined) return at
    const misses = ghosts.get(id) ?? 0
    if (misses >= GHOST_AFTER) return Infinity
    ghosts.set(id, misses)
    return 0
  }

  /**
   * Whether a narrative still streams here that nothing was heard of for STALLED_AFTER_MS
   * (the page then re-reads the frame: `useFrameSocket`).
   */
  function stalled(now = Date.now()): boolean {
    let any = false
    for (const n of Object.values(state.value?.narratives ?? {})) {
      if (n.status !== 'streaming') continue
      const last = heard.get(n.id)
      if (last === undefined) heard.set(n.id, now)
      else if (now - last >= STALLED_AFTER_MS) {
        heard.set(n.id, now) // asked once per stall
        any = true
      }
    }
    return any
  }

  /** Run one request (not twice at once); errors become toasts. Resolves true on success. */
  async function run(label: string, action: () => Promise<void>): Promise<boolean> {
    if (busy.value) return false
    busy.value = label
    try {
      await action()
      return true
    } catch (e) {
      toasts.error(e)
      return false
    } finally {
      busy.value = null
    }
  }

  const fid = () => frameId.value as string
  const keep = (l: Liquid) => {
    if (state.value) state.value = withLocalLiquid(state.value, l)
  }

  // ---- the player's intentions ----

  const submit = (content: string, seat = mySeatId.value) =>
    run('submit', async () => {
      if (!seat) throw new ApiError(403, 'You have no seat in this frame.')
      keep(await api.submitLiquid(fid(), seat, content))
    })
  /**
   * Write in a face: an intention (submitted, for the player to commit) or, as an author or
   * designer, writing sent at once (submitted and committed: its pass makes it into the
   * world or a skill, and the feed shows it).
   */
  const write = (content: string, face: Face = 'player') =>
    face === 'player'
      ? submit(content)
      : run('submit', async () => {
          const written = await api.submitLiquid(fid(), null, content, face)
          keep(written)
          keep(await api.commitLiquid(written.id))
        })
  /** GM: read a failed author's or designer's writing again; the socket brings its new state. */
  const retryWriting = (passId: string) => run(`retry:${passId}`, async () => void (await api.retryPass(passId)))
  const edit = (l: Liquid, content: string) => run(`edit:${l.id}`, async () => keep(await api.editLiquid(l.id, content)))
  const commit = (l: Liquid) => run(`commit:${l.id}`, async () => keep(await api.commitLiquid(l.id)))
  const withdraw = (l: Liquid) =>
    run(`withdraw:${l.id}`, async () => {
      await api.withdrawLiquid(l.id)
      keep({ ...l, status: 'withdrawn' })
    })

  /** Give up my seat; the page then leaves (the socket closes with 4403). */
  const leave = (seat = mySeatId.value) =>
    run('leave', async () => {
      if (!seat) throw new ApiError(403, 'You have no seat in this frame.')
      await api.leaveFrame(fid(), seat)
    })

  /** GM: narrate to everyone (`seat` null) or send one seat a private note; the socket
   * brings the outcome or the note. Resolves true once sent, so the box can empty. */
  const speak = (text: string, seat: string | null) =>
    run('voice', async () => {
      if (seat) await api.sendNote(fid(), seat, text)
      else await api.narrate(fid(), text)
    })

  /** Table talk (out of character): shown at once, the socket's copy is the same message. */
  const say = (text: string) =>
    run('talk', async () => {
      const said = await api.sayAtTable(fid(), text)
      if (state.value && !state.value.talk.some((t) => t.id === said.id)) {
        state.value = { ...state.value, talk: [...state.value.talk, said] }
      }
    })

  /** A liquid a component's own request answered (the GM's review of a held intention): shown at once, never behind the socket's newer copy. */
  const liquidSaved = (l: Liquid) => keep(l)

  /** World content the GM just saved: shown at once; the socket's copy is the same entry. */
  function contentSaved(entry: ContentEntry) {
    if (!state.value) return
    const known = state.value.content.some((c) => c.id === entry.id)
    const content = known ? state.value.content.map((c) => (c.id === entry.id ? entry : c)) : [...state.value.content, entry]
    state.value = { ...state.value, content }
  }

  // ---- the GM ----

  const setSeat = (seat: Seat, input: SeatUpdateInput) =>
    run(`seat:${seat.id}`, async () => {
      const updated = await api.updateSeat(fid(), seat.id, input)
      if (state.value) state.value = { ...state.value, seats: state.value.seats.map((s) => (s.id === updated.id ? updated : s)) }
    })

  /**
   * Rename the frame or change its tempo, who reads intentions or its models. The answer's
   * settings show at once; the socket's `frame.updated` tells every page, this one included.
   */
  const updateSettings = (input: FrameUpdateInput) =>
    run('settings', async () => {
      const view = await api.updateFrame(fid(), input)
      if (!state.value) return
      const { name, tempo, liquid_visibility, player_faces, models } = view
      state.value = { ...state.value, info: { ...state.value.info, name, tempo, liquid_visibility, player_faces, models } }
      toasts.success('Frame settings saved.')
    })

  const rotateInvite = () =>
    run('invite', async () => {
      const { invite_code } = await api.rotateInvite(fid())
      if (state.value) state.value = { ...state.value, info: { ...state.value.info, invite_code } }
      toasts.success('New invite link: the old one no longer works.')
    })

  /** Let spectators watch through a new link, or stop them (their sockets close). */
  const setSpectators = (enabled: boolean) =>
    run('spectators', async () => {
      const { spectator_code } = await api.setSpectators(fid(), enabled)
      if (state.value) state.value = { ...state.value, info: { ...state.value.info, spectator_code } }
    })

  /** Pause, resume or close (`epilogue`: with one); the socket brings the change to everyone, this page included. */
  const control = (action: api.FrameControl, opts: { epilogue?: boolean } = {}) =>
    run(action, async () => {
      if (action === 'close') await api.controlFrame(fid(), action, { epilogue: !!opts.epilogue })
      else await api.controlFrame(fid(), action)
    })

  const advance = () =>
    run('advance', async () => {
      const { acting_seats } = await api.advanceFrame(fid())
      toasts.push(acting_seats.length ? `${acting_seats.length} AI character${acting_seats.length === 1 ? '' : 's'} acting.` : 'No AI character had anything to do.')
    })

  /**
   * Fire an open window now, or cancel it (its committed intentions go back to submitted).
   * Like the controls, the socket brings the window's new state, this page included.
   */
  const fireWindow = (w: FrameWindow) => run(`fire:${w.id}`, async () => void (await api.fireWindow(w.id)))
  const cancelWindow = (w: FrameWindow) => run(`cancel:${w.id}`, async () => void (await api.cancelWindow(w.id)))

  async function loadPasses(): Promise<void> {
    const id = frameId.value
    if (!id) return
    passesLoading.value = true
    try {
      const list = await api.listPasses(id)
      if (frameId.value === id) {
        passes.value = list
        passesError.value = null
      }
    } catch (e) {
      if (frameId.value === id) passesError.value = e instanceof ApiError ? e : new ApiError(0, String(e))
    } finally {
      passesLoading.value = false
    }
  }

  /** GM: close the scene and open the next (titled `title` if given); the socket brings the divider. */
  const closeScene = (title: string) =>
    run('scene', async () => {
      await api.closeScene(fid(), title.trim())
      await loadScenes()
    })

  const retryScene = (number: number) =>
    run(`scene:${number}`, async () => {
      await api.retryScene(fid(), number)
      await loadScenes()
    })

  const retryPass = (p: PassInfo) =>
    run(`retry:${p.id}`, async () => {
      await api.retryPass(p.id)
      await loadPasses()
    })

  return {
    frameId,
    state,
    info,
    seats,
    isGm,
    mySeatId,
    mySeat,
    feed,
    scenes,
    feedWithScenes,
    loadScenes,
    closeScene,
    retryScene,
    nameOf,
    windowOf,
    failed,
    myLiquid,
    othersLiquid,
    typing,
    waiting,
    online,
    loading,
    loadError,
    busy,
    passes,
    passesLoading,
    passesError,
    reset,
    load,
    apply,
    narrativePosition,
    stalled,
    submit,
    write,
    retryWriting,
    edit,
    commit,
    withdraw,
    leave,
    say,
    contentSaved,
    liquidSaved,
    speak,
    setSeat,
    updateSettings,
    rotateInvite,
    setSpectators,
    control,
    advance,
    fireWindow,
    cancelWindow,
    loadPasses,
    retryPass,
  }
})
