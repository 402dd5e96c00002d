/**
 * The realtime socket of one production page: reconnects with exponential backoff and
 * jitter, keeps its subscribers across reconnects, and stops for good when the server
 * closes with 4401 (not signed in) or 4403 (not allowed / not found).
 */
import { getCurrentScope, onScopeDispose, readonly, ref, toValue, watch, type MaybeRefOrGetter } from 'vue'
import { productionSocketUrl } from '@/api/productions'
import type { ServerMessage } from '@/api/types'
import { backoffDelay } from '@/lib/backoff'

export type SocketStatus = 'connecting' | 'open' | 'closed' | 'failed'

/** Server messages, plus `socket.open` after every (re)connect: re-read state then. */
export type SocketEvent = ServerMessage | { type: 'socket.open'; reconnected: boolean }
export type SocketHandler = (event: SocketEvent) => void

export const FINAL_CLOSE_CODES = new Set([4401, 4403])

export interface ProductionSocketOptions {
  /** Overrides the URL (tests); default ws(s)://<host>/ws/productions/<id>/. */
  url?: (id: string) => string
  WebSocketImpl?: typeof WebSocket
  baseDelayMs?: number
  maxDelayMs?: number
  random?: () => number
  /** Keep-alive ping period; 0 disables. */
  pingIntervalMs?: number
}

export function useProductionSocket(productionId: MaybeRefOrGetter<string | null>, options: ProductionSocketOptions = {}) {
  const {
    url = (id: string) => productionSocketUrl(id),
    WebSocketImpl = globalThis.WebSocket,
    baseDelayMs = 500,
    maxDelayMs = 15_000,
    random = Math.random,
    pingIntervalMs = 25_000,
  } = options

  const status = ref<SocketStatus>('closed')
  const closeCode = ref<number | null>(null)
  /** Failed attempts since the last successful open. */
  const attempts = ref(0)
  const handlers = new Set<SocketHandler>()

  let ws: WebSocket | null = null
  let retryTimer: ReturnType<typeof setTimeout> | null = null
  let pingTimer: ReturnType<typeof setInterval> | null = null
  let openedBefore = false
  let currentId: string | null = null

  function emit(event: SocketEvent) {
    for (const h of [...handlers]) {
      try {
        h(event)
      } catch (e) {
        console.error('socket handler failed', e)
      }
    }
  }

  function clearTimers() {
    if (retryTimer) clearTimeout(retryTimer)
    if (pingTimer) clearInterval(pingTimer)
    retryTimer = null
    pingTimer = null
  }

  function connect() {
    if (!currentId) return
    clearTimers()
    status.value = 'connecting'
    const socket = new WebSocketImpl(url(currentId))
    ws = socket
    socket.onopen = () => {
      if (ws !== socket) return
      attempts.value = 0
      status.value = 'open'
      closeCode.value = null
      emit({ type: 'socket.open', reconnected: openedBefore })
      openedBefore = true
      if (pingIntervalMs > 0) {
        pingTimer = setInterval(() => {
          if (socket.readyState === 1) socket.send(JSON.stringify({ type: 'ping' }))
        }, pingIntervalMs)
      }
    }
    socket.onmessage = (e: MessageEvent) => {
      if (ws !== socket) return
      let msg: unknown
      try {
        msg = JSON.parse(String(e.data))
      } catch {
        return
      }
      if (msg && typeof msg === 'object' && typeof (msg as { type?: unknown }).type === 'string') emit(msg as ServerMessage)
    }
    socket.onclose = (e: CloseEvent) => {
      if (ws !== socket) return
      ws = null
      clearTimers()
      closeCode.value = e.code
      if (FINAL_CLOSE_CODES.has(e.code)) {
        status.value = 'failed'
        return
      }
      scheduleReconnect()
    }
    // onerror is always followed by onclose, which does the work.
    socket.onerror = () => undefined
  }

  function scheduleReconnect() {
    status.value = 'connecting'
    const delay = backoffDelay(attempts.value, { baseMs: baseDelayMs, maxMs: maxDelayMs, random })
    attempts.value += 1
    retryTimer = setTimeout(connect, delay)
  }

  /** Close for good (page left). */
  function close() {
    clearTimers()
    const socket = ws
    ws = null
    if (socket && socket.readyState <= 1) socket.close(1000)
    status.value = 'closed'
  }

  /** Open (or re-open after a final stop) for the given production. */
  function open(id: string | null) {
    close()
    currentId = id
    openedBefore = false
    attempts.value = 0
    closeCode.value = null
    if (id) connect()
  }

  /** Reconnect now instead of waiting for the backoff timer. */
  function reconnectNow() {
    if (status.value === 'open' || !currentId) return
    clearTimers()
    connect()
  }

  /** Listen to socket events; returns the function that stops listening. */
  function subscribe(handler: SocketHandler): () => void {
    handlers.add(handler)
    return () => {
      handlers.delete(handler)
    }
  }

  watch(
    () => toValue(productionId),
    (id) => open(id ?? null),
    { immediate: true },
  )
  if (getCurrentScope()) onScopeDispose(close)

  return {
    status: readonly(status),
    closeCode: readonly(closeCode),
    attempts: readonly(attempts),
    subscribe,
    close,
    reconnectNow,
  }
}
