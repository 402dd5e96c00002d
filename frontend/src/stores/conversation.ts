/**
 * One production's conversation: its turns, the visible branch, and the actions on it.
 * The page's live socket (useLiveSocket in ProductionView) feeds it: `load` is its re-read,
 * `apply` takes each in-order event, `tokenPosition` says which delta of a turn comes next.
 */
import { defineStore } from 'pinia'
import { computed, ref } from 'vue'
import * as api from '@/api/productions'
import { ApiError } from '@/api/http'
import type { DraftMessage, ProductionDetail, ProductionRewindAnswer, ServerMessage, Turn } from '@/api/types'
import { childrenMap, countBelow, descendants, otherBranches, siblingLeaf, visiblePath, type PathEntry } from '@/lib/branches'
import {
  applyMessage,
  emptyConversation,
  isActive,
  keepRestarts,
  mergeSnapshot,
  tokenPosition as positionIn,
  type ConversationState,
} from '@/lib/conversation'
import { useToastsStore } from './toasts'

export type ProductionInfo = Omit<ProductionDetail, 'turns' | 'head' | 'autoplay_remaining' | 'event_seq'>

/** A cast member's next line drafted by the model ("impersonate"), until it is sent. */
export interface Draft {
  id: string
  persona: string
  text: string
  /** Deltas received (the next `index` expected). */
  count: number
  status: 'writing' | 'done' | 'failed'
  error: string
}

/** A random UUID, also where crypto.randomUUID is missing (plain http on a LAN address). */
function randomId(): string {
  const b = crypto.getRandomValues(new Uint8Array(16))
  b[6] = (b[6]! & 0x0f) | 0x40
  b[8] = (b[8]! & 0x3f) | 0x80
  const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

export const useConversationStore = defineStore('conversation', () => {
  const toasts = useToastsStore()

  const productionId = ref<string | null>(null)
  const production = ref<ProductionInfo | null>(null)
  const state = ref<ConversationState>(emptyConversation())
  const leafId = ref<string | null>(null)
  /** The branch ends exactly at `leafId` (the server's head, e.g. rewound), not below it. */
  const exactLeaf = ref(false)
  /** The last rewind of this page: the head that restores it, and how many turns it hid. */
  /** Bumped when a turn's state pass changed the cast's state (`cast.state`). */
  const castStateChanges = ref(0)
  const lastRewind = ref<{ to: string; restore: string; turns: number } | null>(null)
  const loading = ref(false)
  const loadError = ref<ApiError | null>(null)
  /** What is being sent right now ('next', an assistant id, 'director', 'autoplay'…). */
  const sending = ref<string | null>(null)
  const directiveTurnId = ref<string | null>(null)
  const directiveLoading = ref(false)
  const draft = ref<Draft | null>(null)

  const turns = computed(() => state.value.turns)
  const autoplayRemaining = computed(() => state.value.autoplayRemaining)
  /** Auto-play ended because a turn failed: which one, and why. */
  const autoplayStopped = computed(() => state.value.autoplayStopped)
  /** Turns being written again after their worker was lost: turn id → attempt. */
  const restarts = computed(() => state.value.restarts)
  const path = computed(() => visiblePath(state.value.turns, leafId.value, exactLeaf.value))
  const children = computed(() => childrenMap(state.value.turns))
  /** How many turns follow `turn` (asked before deleting it). */
  const laterTurns = (turn: Turn) => countBelow(children.value, turn.id)
  /** Versions of a shown turn that the conversation also goes on from (hidden turns). */
  const elsewhere = (entry: PathEntry<Turn>) => otherBranches(children.value, entry)
  /** The last turn of the visible branch: where new turns attach. */
  const branchEnd = computed<Turn | null>(() => path.value[path.value.length - 1]?.turn ?? null)
  const activeTurn = computed(() => state.value.turns.find(isActive) ?? null)
  const isGenerating = computed(() => activeTurn.value !== null)
  const castById = computed(() => new Map((production.value?.cast ?? []).map((c) => [c.id, c])))
  const directiveTurn = computed(() => state.value.turns.find((t) => t.id === directiveTurnId.value) ?? null)

  function applySnapshot(detail: ProductionDetail, keepStreamed: boolean) {
    const { turns: list, head, autoplay_remaining, event_seq: _seq, ...info } = detail
    production.value = info
    const turnList = mergeSnapshot(state.value.turns, list, keepStreamed)
    state.value = {
      turns: turnList,
      autoplayRemaining: autoplay_remaining,
      restarts: keepRestarts(state.value.restarts, turnList),
      autoplayStopped: state.value.autoplayStopped,
    }
    // Keep the branch being looked at; otherwise follow the server's head.
    if (!leafId.value || !list.some((t) => t.id === leafId.value)) {
      leafId.value = head
      exactLeaf.value = true
    }
  }

  /** Apply one in-order socket event; false when it cannot be placed (re-read then). */
  function apply(msg: ServerMessage): boolean {
    if (msg.type.startsWith('draft.')) {
      applyDraft(msg as DraftMessage)
      return true
    }
    const end = branchEnd.value
    const ok = applyMessage(state.value, msg)
    if (ok && msg.type === 'turn.created') follow(msg.turn, end)
    if (ok && msg.type === 'turns.deleted' && leafId.value && msg.turns.includes(leafId.value)) {
      leafId.value = msg.head
    }
    if (msg.type === 'cast.state') castStateChanges.value++
    if (msg.type === 'head.moved' && msg.head !== leafId.value) {
      // Another branch is followed (a rewind, its restore, or a choice in another tab).
      leafId.value = msg.head
      exactLeaf.value = true
    }
    return ok
  }

  /** A draft's deltas and end; those of another (older) draft are ignored. */
  function applyDraft(msg: DraftMessage) {
    const d = draft.value
    if (!d || d.id !== msg.draft || d.status !== 'writing') return
    if (msg.type === 'draft.token') {
      if (msg.index !== d.count) return // a duplicate; a lost one is mended by draft.done
      d.text += msg.delta
      d.count++
    } else if (msg.type === 'draft.done') {
      d.text = msg.content
      d.status = 'done'
    } else {
      d.status = 'failed'
      d.error = msg.error
    }
  }

  /** The next delta index expected for a turn (Infinity once finished, undefined if unknown). */
  const tokenPosition = (turnId: string, attempt?: number) =>
    positionIn(state.value, turnId, attempt)

  /** A new turn attached to the end of the visible branch becomes its new end. */
  function follow(turn: Turn, end: Turn | null) {
    if ((end === null && turn.parent === null) || (end && turn.parent === end.id)) leafId.value = turn.id
  }

  /**
   * Read the production (first load, and the socket's every re-read). `since` is the last
   * event seq applied here: if the snapshot holds no newer one, text streamed past its
   * checkpoint is kept. Returns the snapshot's `event_seq`; rejects when it cannot be read.
   */
  async function load(id: string, { since = null }: { since?: number | null } = {}): Promise<number> {
    if (productionId.value !== id) {
      productionId.value = id
      production.value = null
      state.value = emptyConversation()
      leafId.value = null
      directiveTurnId.value = null
    }
    loading.value = true
    loadError.value = null
    try {
      const detail = await api.getProduction(id)
      if (productionId.value === id) applySnapshot(detail, since !== null && detail.event_seq === since)
      return detail.event_seq
    } catch (e) {
      if (productionId.value === id) loadError.value = e instanceof ApiError ? e : new ApiError(0, String(e))
      throw e
    } finally {
      loading.value = false
    }
  }

  /** A turn this page asked for: shown and followed, unless what is followed already
   *  comes after it (an auto-reply the socket brought before this answer). */
  function insertOwn(turn: Turn) {
    applyMessage(state.value, { type: 'turn.created', seq: -1, turn })
    if (!descends(leafId.value, turn.id)) leafId.value = turn.id
  }

  /** Whether turn `id` is `ancestor` or lies below it. */
  function descends(id: string | null, ancestor: string): boolean {
    const parents = new Map(state.value.turns.map((t) => [t.id, t.parent]))
    for (let at = id; at; at = parents.get(at) ?? null) if (at === ancestor) return true
    return false
  }

  /** Run one request; `exclusive` ones are not sent twice at once (double clicks). */
  async function run(label: string, action: () => Promise<void>, exclusive = true) {
    if (exclusive && sending.value) return
    if (exclusive) sending.value = label
    try {
      await action()
    } catch (e) {
      if (e instanceof ApiError && e.status === 409) toasts.push(e.detail || 'A turn is already being generated.', 'error')
      else toasts.error(e)
    } finally {
      if (exclusive) sending.value = null
    }
  }

  const pid = () => productionId.value as string

  /** Ask one assistant (or, without one, whoever the server picks) to speak next. */
  const speak = (assistantId?: string) =>
    run(assistantId ?? 'next', async () => {
      const parent = branchEnd.value?.id ?? null
      const turn = await api.createTurn(pid(), assistantId ? { assistant: assistantId, parent } : { parent })
      insertOwn(turn)
    })

  /** Generate a sibling of `turn`: same speaker, same parent (also the retry of a failed turn). */
  const regenerate = (turn: Turn) =>
    run(`regenerate:${turn.id}`, async () => {
      const input = turn.assistant ? { assistant: turn.assistant, parent: turn.parent } : { parent: turn.parent }
      insertOwn(await api.createTurn(pid(), input))
    })

  /** Written words at the end of the branch: a director's note, or a line as `persona`. */
  const send = (content: string, persona?: string) =>
    run('director', async () => {
      const parent = branchEnd.value?.id ?? null
      insertOwn(await api.createTurn(pid(), persona ? { content, persona, parent } : { content, parent }))
      if (draft.value?.persona === persona) draft.value = null
    })
  const sendDirector = (content: string) => send(content)

  /** Replace a finished turn's text; resolves true when saved. */
  async function editTurn(turn: Turn, content: string): Promise<boolean> {
    let saved = false
    await run(`edit:${turn.id}`, async () => {
      applyMessage(state.value, { type: 'turn.edited', seq: -1, turn: await api.editTurn(pid(), turn.id, content) })
      saved = true
    }, false)
    return saved
  }

  /** Delete a turn; one with later turns needs `branch` (delete them too, or keep them). */
  const deleteTurn = (turn: Turn, branch?: 'delete' | 'keep') =>
    run(`delete:${turn.id}`, async () => {
      await api.deleteTurn(pid(), turn.id, branch)
      const gone = branch === 'delete' ? [turn.id, ...descendants(children.value, turn.id).map((t) => t.id)] : [turn.id]
      const kept = branch === 'keep' ? (children.value.get(turn.id) ?? []).map((t) => t.id) : []
      if (leafId.value && gone.includes(leafId.value)) {
        // What is left under its parent shows, its newest turn last (the server's new head).
        leafId.value = turn.parent
        exactLeaf.value = false
      }
      applyMessage(state.value, { type: 'turns.deleted', seq: -1, turns: gone, reparented: kept, head: null })
    })

  /** What rewinding to `turn` would undo (a dry run); null when refused (said in a toast). */
  async function previewRewind(turn: Turn): Promise<ProductionRewindAnswer | null> {
    try {
      return await api.rewind(pid(), turn.id, true)
    } catch (e) {
      toasts.error(e)
      return null
    }
  }

  /** Go back to `turn`: the later turns are hidden (kept), and `restoreRewind` brings them back. */
  const rewindTo = (turn: Turn) =>
    run(`rewind:${turn.id}`, async () => {
      const answer = await api.rewind(pid(), turn.id, false)
      leafId.value = turn.id
      exactLeaf.value = true
      lastRewind.value = { to: turn.id, restore: answer.restore, turns: answer.turns.length }
    })

  /** Undo the last rewind: follow the branch it left again, its state with it. */
  const restoreRewind = () =>
    run('restore', async () => {
      const undone = lastRewind.value
      if (!undone) return
      await api.setHead(pid(), undone.restore)
      leafId.value = undone.restore
      exactLeaf.value = true
      lastRewind.value = null
    })

  const dismissRewind = () => {
    lastRewind.value = null
  }

  /** Extend the last turn of the branch; it streams on like a new turn. */
  const continueTurn = (turn: Turn) =>
    run(`continue:${turn.id}`, async () => {
      const pending = await api.continueTurn(pid(), turn.id)
      // The socket's turn.continued (with the run's number) usually came first.
      const known = state.value.turns.find((t) => t.id === turn.id)
      if (known && !isActive(known)) {
        applyMessage(state.value, { type: 'turn.continued', seq: -1, turn: pending, attempt: (pending.attempts ?? 0) + 1 })
      }
    })

  /** Ask the model to draft `persona`'s next line; it streams into `draft`. */
  const impersonate = (persona: string) =>
    run(`impersonate:${persona}`, async () => {
      const id = randomId()
      draft.value = { id, persona, text: '', count: 0, status: 'writing', error: '' }
      try {
        await api.impersonate(pid(), persona, branchEnd.value?.id ?? null, id)
      } catch (e) {
        if (draft.value?.id === id) draft.value = null
        throw e
      }
    })

  function discardDraft() {
    draft.value = null
  }

  /** Let the next speaker answer written words by itself (a setting of the production). */
  const setAutoReply = (on: boolean) =>
    run('auto-reply', async () => {
      const saved = await api.updateProduction(pid(), { auto_reply: on })
      if (production.value) production.value.auto_reply = saved.auto_reply
    }, false)

  const stop = (turn: Turn) =>
    run(`stop:${turn.id}`, async () => {
      const stopped = await api.stopTurn(pid(), turn.id)
      applyMessage(state.value, { type: 'turn.done', seq: -1, turn: stopped })
    }, false)

  const startAutoplay = (count: number) =>
    run('autoplay', async () => {
      state.value.autoplayStopped = null // a new run: the last one's failure is old news
      const { autoplay_remaining } = await api.startAutoplay(pid(), count, branchEnd.value?.id ?? undefined)
      state.value.autoplayRemaining = autoplay_remaining
    })

  const stopAutoplay = () =>
    run('autoplay-stop', async () => {
      const { autoplay_remaining } = await api.stopAutoplay(pid())
      state.value.autoplayRemaining = autoplay_remaining
    }, false)

  function dismissAutoplayStopped() {
    state.value.autoplayStopped = null
  }

  /** Show the sibling `delta` steps away from `turn`, with its latest descendants below. */
  function showSibling(turn: Turn, delta: number) {
    const leaf = siblingLeaf(state.value.turns, turn.id, delta)
    if (!leaf) return
    leafId.value = leaf
    exactLeaf.value = false
    // Remember the choice on the server (auto-play and a reload follow it); best effort.
    api.setHead(pid(), leaf).catch(() => undefined)
  }

  /**
   * Show a turn's directive. Socket messages do not carry directives, so for a turn that
   * arrived live they are read over REST (only the directives are taken from that read:
   * the socket keeps the rest of the state).
   */
  async function openDirective(turn: Turn | null) {
    directiveTurnId.value = turn?.id ?? null
    if (!turn || turn.directive !== undefined || !production.value?.show_directive) return
    const id = productionId.value as string
    directiveLoading.value = true
    try {
      const detail = await api.getProduction(id)
      if (productionId.value !== id) return
      const directives = new Map(detail.turns.map((t) => [t.id, t.directive]))
      for (const t of state.value.turns) {
        const directive = directives.get(t.id)
        if (t.directive === undefined && directive !== undefined) t.directive = directive
      }
    } catch (e) {
      toasts.error(e)
    } finally {
      directiveLoading.value = false
    }
  }

  return {
    productionId,
    production,
    turns,
    leafId,
    path,
    branchEnd,
    activeTurn,
    isGenerating,
    autoplayRemaining,
    autoplayStopped,
    dismissAutoplayStopped,
    castById,
    loading,
    loadError,
    sending,
    directiveTurn,
    directiveLoading,
    restarts,
    load,
    apply,
    tokenPosition,
    speak,
    regenerate,
    sendDirector,
    send,
    editTurn,
    deleteTurn,
    continueTurn,
    impersonate,
    discardDraft,
    draft,
    setAutoReply,
    laterTurns,
    elsewhere,
    stop,
    startAutoplay,
    stopAutoplay,
    showSibling,
    openDirective,
    previewRewind,
    rewindTo,
    restoreRewind,
    dismissRewind,
    lastRewind,
    castStateChanges,
  }
})
