/**
 * One production's conversation: its turns, the visible branch, and the actions on it.
 * The page's live socket (useLiveSocket in ProductionView) feeds it: `load` is its re-read,
 * `apply` takes each in-order event, `tokenPosition` says which delta of a turn comes next.
 */
import { defineStore } from 'pinia'
import { computed, ref } from 'vue'
import * as api from '@/api/productions'
import { ApiError } from '@/api/http'
import type { ProductionDetail, ServerMessage, Turn } from '@/api/types'
import { siblingLeaf, visiblePath } from '@/lib/branches'
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

export const useConversationStore = defineStore('conversation', () => {
  const toasts = useToastsStore()

  const productionId = ref<string | null>(null)
  const production = ref<ProductionInfo | null>(null)
  const state = ref<ConversationState>(emptyConversation())
  const leafId = ref<string | null>(null)
  const loading = ref(false)
  const loadError = ref<ApiError | null>(null)
  /** What is being sent right now ('next', an assistant id, 'director', 'autoplay'…). */
  const sending = ref<string | null>(null)
  const directiveTurnId = ref<string | null>(null)
  const directiveLoading = ref(false)

  const turns = computed(() => state.value.turns)
  const autoplayRemaining = computed(() => state.value.autoplayRemaining)
  /** Auto-play ended because a turn failed: which one, and why. */
  const autoplayStopped = computed(() => state.value.autoplayStopped)
  /** Turns being written again after their worker was lost: turn id → attempt. */
  const restarts = computed(() => state.value.restarts)
  const path = computed(() => visiblePath(state.value.turns, leafId.value))
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
    if (!leafId.value || !list.some((t) => t.id === leafId.value)) leafId.value = head
  }

  /** Apply one in-order socket event; false when it cannot be placed (re-read then). */
  function apply(msg: ServerMessage): boolean {
    const end = branchEnd.value
    const ok = applyMessage(state.value, msg)
    if (ok && msg.type === 'turn.created') follow(msg.turn, end)
    return ok
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

  function insertOwn(turn: Turn) {
    applyMessage(state.value, { type: 'turn.created', seq: -1, turn })
    leafId.value = turn.id
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

  const sendDirector = (content: string) =>
    run('director', async () => {
      insertOwn(await api.createTurn(pid(), { content, parent: branchEnd.value?.id ?? null }))
    })

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
    stop,
    startAutoplay,
    stopAutoplay,
    showSibling,
    openDirective,
  }
})
