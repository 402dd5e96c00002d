/**
 * One live page's socket: reconnects with exponential backoff and jitter, keeps the
 * connection alive with pings, stops for good on 4401 (no session) or 4403 (refused, or
 * access revoked), and keeps the page's state in step (`EventSync`): a re-read at start and
 * after every (re)connect, and on any gap in `seq` or in a stream's `index`, with the
 * messages that arrive meanwhile buffered and replayed.
 *
 * The server's limits (docs/realtime.md, "Limits"): 4408 (this page read too slowly, the
 * server dropped what waited for it) reconnects at once and re-reads over REST; 4429 (the
 * page is open in too many tabs) retries with backoff; a message over `maxMessageBytes` is
 * not sent (the server would answer with an error frame and close 1009).
 *
 *   const live = useLiveSocket(() => productionSocketUrl(id), {
 *     resync: (since) => store.load(id, { since }),   // resolves with the snapshot's seq
 *     apply: (msg) => store.apply(msg),
 *     streams: { of: (m) => (m.type === 'turn.token' ? m.turn : undefined), position: store.tokenPosition },
 *   })
 */
import { getCurrentScope, onScopeDispose, readonly, ref, shallowRef, toValue, watch, type MaybeRefOrGetter } from 'vue'
import { backoffDelay } from '@/lib/backoff'
import { EventSync, type EventSyncOptions, type LiveMessage } from '@/lib/sequence'

export type LiveStatus = 'connecting' | 'open' | 'closed' | 'failed'

/** The server's error frame (an inbound message it refused). */
export interface ServerError {
  code: string
  detail: string
}

export const FINAL_CLOSE_CODES: readonly number[] = [4401, 4403]
/** The server dropped what waited for this page, which read too slowly: reconnect, re-read. */
export const CLOSE_TOO_SLOW = 4408
/** This user has too many sockets open on this page (tabs): retried with backoff. */
export const CLOSE_TOO_MANY = 4429
/** A message over the server's size limit (after its `too_large` error frame). */
export const CLOSE_TOO_LARGE = 1009
/** The server's LMIX_SOCKET_MAX_MESSAGE_BYTES default. */
export const MAX_MESSAGE_BYTES = 65_536

export interface LiveSocketOptions<M extends LiveMessage> extends Omit<EventSyncOptions<M>, 'onChange'> {
  /** The frame the server sends once the socket has joined its groups: re-read then, so
   *  the snapshot cannot miss an event sent in between. null: re-read on open. */
  readyType?: string | null
  finalCloseCodes?: readonly number[]
  WebSocketImpl?: typeof WebSocket
  /** Reconnect delays (see lib/backoff.ts). */
  baseDelayMs?: number
  maxDelayMs?: number
  random?: () => number
  /** Keep-alive ping period; a socket that answers nothing for a whole period is dropped
   *  and reconnected. 0 disables. */
  pingIntervalMs?: number
  /** Messages longer than this (UTF-8 bytes) are refused by `send`, never sent. */
  maxMessageBytes?: number
}

export type MessageHandler<M> = (msg: M) => void

export function useLiveSocket<M extends LiveMessage>(url: MaybeRefOrGetter<string | null>, options: LiveSocketOptions<M>) {
  const {
    readyType = 'ready',
    finalCloseCodes = FINAL_CLOSE_CODES,
    WebSocketImpl = globalThis.WebSocket,
    baseDelayMs = 500,
    maxDelayMs = 15_000,
    random = Math.random,
    pingIntervalMs = 25_000,
    maxMessageBytes = MAX_MESSAGE_BYTES,
  } = options

  const status = ref<LiveStatus>('closed')
  const closeCode = ref<number | null>(null)
  /** Failed attempts since the last time the server said it was ready. */
  const attempts = ref(0)
  /** A re-read runs or is scheduled (messages are buffered meanwhile). */
  const syncing = ref(false)
  const lastSeq = ref<number | null>(null)
  const lastError = shallowRef<ServerError | null>(null)
  const handlers = new Set<MessageHandler<M>>()

  const sync = new EventSync<M>({
    ...options,
    apply(msg) {
      const ok = options.apply(msg)
      if (ok !== false) {
        for (const handler of [...handlers]) {
          try {
            handler(msg)
          } catch (e) {
            console.error('socket subscriber failed', e)
          }
        }
      }
      return ok
    },
    onChange() {
      syncing.value = sync.syncing
      lastSeq.value = sync.lastSeq
    },
  })

  let ws: WebSocket | null = null
  let currentUrl: string | null = null
  let retryTimer: ReturnType<typeof setTimeout> | null = null
  let pingTimer: ReturnType<typeof setInterval> | null = null
  let heard = true

  function clearTimers() {
    if (retryTimer) clearTimeout(retryTimer)
    if (pingTimer) clearInterval(pingTimer)
    retryTimer = null
    pingTimer = null
  }

  function ready() {
    attempts.value = 0
    void sync.resync()
  }

  function receive(data: unknown) {
    let msg: unknown
    try {
      msg = JSON.parse(String(data))
    } catch {
      return
    }
    if (!msg || typeof msg !== 'object' || typeof (msg as { type?: unknown }).type !== 'string') return
    const type = (msg as LiveMessage).type
    if (type === 'pong') return
    if (readyType !== null && type === readyType) return ready()
    if (type === 'error') {
      const { code = '', detail = '' } = msg as Partial<ServerError>
      lastError.value = { code: String(code), detail: String(detail) }
      console.warn(`socket error frame: ${code} ${detail}`)
      return
    }
    sync.handle(msg as M)
  }

  function connect() {
    if (!currentUrl) return
    clearTimers()
    status.value = 'connecting'
    const socket = new WebSocketImpl(currentUrl)
    ws = socket
    socket.onopen = () => {
      if (ws !== socket) return
      status.value = 'open'
      closeCode.value = null
      if (readyType === null) ready()
      if (pingIntervalMs > 0) {
        heard = true
        pingTimer = setInterval(() => keepAlive(socket), pingIntervalMs)
      }
    }
    socket.onmessage = (e: MessageEvent) => {
      if (ws !== socket) return
      heard = true
      receive(e.data)
    }
    socket.onclose = (e: CloseEvent) => {
      if (ws !== socket) return
      ws = null
      clearTimers()
      closeCode.value = e.code
      if (finalCloseCodes.includes(e.code)) {
        status.value = 'failed'
        sync.stop()
        return
      }
      scheduleReconnect()
    }
    // onerror is always followed by onclose, which does the work.
    socket.onerror = () => undefined
  }

  /** Ping; if nothing at all came back since the last ping, the link is dead: reconnect. */
  function keepAlive(socket: WebSocket) {
    if (ws !== socket) return
    if (!heard) {
      ws = null
      clearTimers()
      socket.close(4000, 'keep-alive timeout')
      closeCode.value = null
      scheduleReconnect()
      return
    }
    heard = false
    if (socket.readyState === 1) socket.send(JSON.stringify({ type: 'ping' }))
  }

  function scheduleReconnect() {
    status.value = 'connecting'
    const delay = backoffDelay(attempts.value, { baseMs: baseDelayMs, maxMs: maxDelayMs, random })
    attempts.value += 1
    retryTimer = setTimeout(connect, delay)
  }

  /** Close for good (page left); `open` starts again. */
  function close() {
    clearTimers()
    sync.stop()
    const socket = ws
    ws = null
    if (socket && socket.readyState <= 1) socket.close(1000)
    status.value = 'closed'
  }

  /** Follow `next` (or nothing): a fresh state, read at once and after the socket is ready. */
  function open(next: string | null) {
    close()
    sync.reset()
    currentUrl = next
    attempts.value = 0
    closeCode.value = null
    lastError.value = null
    if (!next) return
    void sync.resync()
    connect()
  }

  /** Reconnect now instead of waiting for the backoff timer. */
  function reconnectNow() {
    if (!currentUrl || status.value !== 'connecting' || !retryTimer) return
    connect()
  }

  /** Send a message to the server; false when the socket is not open, or the message is
   *  over the server's size limit (then `lastError` says so, and the socket stays open). */
  function send(msg: LiveMessage): boolean {
    if (!ws || ws.readyState !== 1) return false
    const text = JSON.stringify(msg)
    if (new TextEncoder().encode(text).length > maxMessageBytes) {
      lastError.value = { code: 'too_large', detail: `Messages are at most ${maxMessageBytes} bytes.` }
      return false
    }
    ws.send(text)
    return true
  }

  /** Be told of every message once it is applied, in order; returns the unsubscribe. */
  function subscribe(handler: MessageHandler<M>): () => void {
    handlers.add(handler)
    return () => {
      handlers.delete(handler)
    }
  }

  watch(
    () => toValue(url),
    (next) => open(next ?? null),
    { immediate: true },
  )
  if (getCurrentScope()) onScopeDispose(close)

  return {
    status: readonly(status),
    closeCode: readonly(closeCode),
    attempts: readonly(attempts),
    syncing: readonly(syncing),
    lastSeq: readonly(lastSeq),
    lastError: readonly(lastError),
    /** Re-read the state now (e.g. "Try again" after a failed load). */
    resync: () => sync.resync(),
    subscribe,
    send,
    reconnectNow,
    close,
  }
}
