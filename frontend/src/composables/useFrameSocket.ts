/**
 * The live socket of a frame page (player's or GM's): one per page, feeding the frame store.
 * It reads the frame at once and after every (re)connect or gap, stops for good on 4401
 * (the session is handed to the login check), 4403 (not, or no longer, in this frame) and
 * 4404 (the frame ended for good: closed by its GM, or deleted; read once more then), and
 * sends the player's typing presence, throttled. A narrative that stays silent past the
 * server's own timeout is re-read (`store.stalled`): its last event was lost on the way.
 */
import { computed, getCurrentScope, onScopeDispose, watch, type MaybeRefOrGetter, toValue } from 'vue'
import { frameSocketUrl } from '@/api/frames'
import { reportUnauthorized } from '@/api/http'
import type { FrameMessage } from '@/api/types'
import { FINAL_CLOSE_CODES, useLiveSocket } from '@/composables/useLiveSocket'
import { frameEnd } from '@/lib/frame'
import type { LiveMessage } from '@/lib/sequence'
import { useFrameStore } from '@/stores/frame'

/** The least time between two "typing" messages (receivers keep one alive for longer). */
export const VAPOR_EVERY_MS = 2500
/** The frame was closed for good or deleted: nothing will ever be sent on its socket. */
export const CLOSE_GONE = 4404
/** How often the page looks for a narrative that went silent (`store.stalled`). */
export const STALL_CHECK_MS = 5000

export function useFrameSocket(frameId: MaybeRefOrGetter<string>) {
  const store = useFrameStore()
  const socket = useLiveSocket<FrameMessage>(() => frameSocketUrl(toValue(frameId)), {
    resync: () => store.load(toValue(frameId)),
    apply: (msg) => store.apply(msg),
    finalCloseCodes: [...FINAL_CLOSE_CODES, CLOSE_GONE],
    streams: {
      of: (msg) => (msg.type === 'narrative.token' ? msg.solid : undefined),
      position: (stream) => store.narrativePosition(stream),
    },
  })
  watch(socket.closeCode, (code) => {
    if (code === 4401) reportUnauthorized()
  })
  const watchdog = setInterval(() => {
    if (socket.status.value === 'open' && store.stalled()) void store.load(toValue(frameId)).catch(() => undefined)
  }, STALL_CHECK_MS)
  if (getCurrentScope()) onScopeDispose(() => clearInterval(watchdog))
  /** Refused or revoked: a kicked player, or a frame that is gone. Nothing more arrives. */
  const accessEnded = computed(() => socket.status.value === 'failed' && socket.closeCode.value === 4403)
  /** The frame ended for good (closed by its GM, or deleted): nothing more arrives. */
  const gone = computed(() => socket.status.value === 'failed' && socket.closeCode.value === CLOSE_GONE)
  // One last read: the scene as it ended (a narrative finished meanwhile), or a 404 that
  // says it was deleted.
  watch(gone, (ended) => {
    if (ended) void store.load(toValue(frameId)).catch(() => undefined)
  })
  /** How the page says it ended (lib/frame.ts `frameEnd`). */
  const end = computed(() => (gone.value ? frameEnd(store.state, { missing: store.loadError?.status === 404 }) : null))

  /** When the last "typing" was sent; null: the others do not think we are typing. */
  let lastVapor: number | null = null
  /** The player typed for `seat`: tell the others (never the text), at most every few seconds. */
  function typed(seat: string, now = Date.now()) {
    if (lastVapor !== null && now - lastVapor < VAPOR_EVERY_MS) return
    const vapor: LiveMessage & { seat: string } = { type: 'vapor', seat }
    if (socket.send(vapor)) lastVapor = now
  }
  /** The player stopped (sent or cleared their text): the others' "typing…" ends now. */
  function stoppedTyping(seat: string) {
    if (lastVapor === null) return
    lastVapor = null
    const vapor: LiveMessage & { seat: string; typing: boolean } = { type: 'vapor', seat, typing: false }
    socket.send(vapor)
  }

  return { ...socket, accessEnded, gone, end, typed, stoppedTyping }
}
