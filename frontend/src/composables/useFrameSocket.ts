/**
 * The live socket of a frame page (player's or GM's): one per page, feeding the frame store.
 * It reads the frame at once and after every (re)connect or gap, stops for good on 4401
 * (the session is handed to the login check) and 4403 (not, or no longer, in this frame),
 * and sends the player's typing presence, throttled.
 */
import { computed, watch, type MaybeRefOrGetter, toValue } from 'vue'
import { frameSocketUrl } from '@/api/frames'
import { reportUnauthorized } from '@/api/http'
import type { FrameMessage } from '@/api/types'
import { useLiveSocket } from '@/composables/useLiveSocket'
import type { LiveMessage } from '@/lib/sequence'
import { useFrameStore } from '@/stores/frame'

/** The least time between two "typing" messages (receivers keep one alive for longer). */
export const VAPOR_EVERY_MS = 2500

export function useFrameSocket(frameId: MaybeRefOrGetter<string>) {
  const store = useFrameStore()
  const socket = useLiveSocket<FrameMessage>(() => frameSocketUrl(toValue(frameId)), {
    resync: () => store.load(toValue(frameId)),
    apply: (msg) => store.apply(msg),
    streams: {
      of: (msg) => (msg.type === 'narrative.token' ? msg.solid : undefined),
      position: (stream) => store.narrativePosition(stream),
    },
  })
  watch(socket.closeCode, (code) => {
    if (code === 4401) reportUnauthorized()
  })
  /** Refused or revoked: a kicked player, or a frame that is gone. Nothing more arrives. */
  const accessEnded = computed(() => socket.status.value === 'failed' && socket.closeCode.value === 4403)

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

  return { ...socket, accessEnded, typed, stoppedTyping }
}
