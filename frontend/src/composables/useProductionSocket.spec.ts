import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { effectScope, nextTick, ref } from 'vue'
import { useProductionSocket, type SocketEvent } from './useProductionSocket'

class FakeSocket {
  static instances: FakeSocket[] = []
  readyState = 0
  sent: string[] = []
  onopen: (() => void) | null = null
  onmessage: ((e: { data: string }) => void) | null = null
  onclose: ((e: { code: number }) => void) | null = null
  onerror: (() => void) | null = null
  closedWith: number | null = null
  constructor(readonly url: string) {
    FakeSocket.instances.push(this)
  }
  send(data: string) {
    this.sent.push(data)
  }
  close(code = 1000) {
    this.closedWith = code
    this.readyState = 3
  }
  // Test helpers: what the server would do.
  open() {
    this.readyState = 1
    this.onopen?.()
  }
  message(data: unknown) {
    this.onmessage?.({ data: JSON.stringify(data) })
  }
  drop(code = 1006) {
    this.readyState = 3
    this.onclose?.({ code })
  }
}

const last = () => FakeSocket.instances[FakeSocket.instances.length - 1] as FakeSocket

function start(id = ref<string | null>('p1')) {
  const scope = effectScope()
  const socket = scope.run(() =>
    useProductionSocket(id, {
      url: (pid) => `ws://test/ws/productions/${pid}/`,
      WebSocketImpl: FakeSocket as unknown as typeof WebSocket,
      baseDelayMs: 100,
      maxDelayMs: 1000,
      random: () => 1,
      pingIntervalMs: 0,
    }),
  )!
  return { socket, scope, id }
}

describe('useProductionSocket', () => {
  beforeEach(() => {
    FakeSocket.instances = []
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('connects to the production URL and reports open', () => {
    const { socket } = start()
    expect(last().url).toBe('ws://test/ws/productions/p1/')
    expect(socket.status.value).toBe('connecting')
    last().open()
    expect(socket.status.value).toBe('open')
  })

  it('delivers parsed messages to subscribers until they unsubscribe', () => {
    const { socket } = start()
    const seen: SocketEvent[] = []
    const off = socket.subscribe((e) => seen.push(e))
    last().open()
    last().message({ type: 'autoplay', seq: 1, autoplay_remaining: 2 })
    off()
    last().message({ type: 'autoplay', seq: 2, autoplay_remaining: 1 })
    expect(seen).toEqual([
      { type: 'socket.open', reconnected: false },
      { type: 'autoplay', seq: 1, autoplay_remaining: 2 },
    ])
  })

  it('reconnects with exponential backoff and keeps subscribers', async () => {
    const { socket } = start()
    const seen: SocketEvent[] = []
    socket.subscribe((e) => seen.push(e))
    last().open()
    last().drop()
    expect(socket.status.value).toBe('connecting')
    expect(FakeSocket.instances).toHaveLength(1)
    vi.advanceTimersByTime(99)
    expect(FakeSocket.instances).toHaveLength(1)
    vi.advanceTimersByTime(1) // attempt 0: 100 ms
    expect(FakeSocket.instances).toHaveLength(2)
    last().drop()
    vi.advanceTimersByTime(199)
    expect(FakeSocket.instances).toHaveLength(2)
    vi.advanceTimersByTime(1) // attempt 1: 200 ms
    expect(FakeSocket.instances).toHaveLength(3)
    last().open()
    expect(socket.status.value).toBe('open')
    // Subscribers are told it was a reconnect (so they re-read state).
    expect(seen.at(-1)).toEqual({ type: 'socket.open', reconnected: true })
    last().message({ type: 'pong' })
    expect(seen.at(-1)).toEqual({ type: 'pong' })
    await nextTick()
  })

  it.each([4401, 4403])('stops for good on close code %i', (code) => {
    const { socket } = start()
    last().open()
    last().drop(code)
    expect(socket.status.value).toBe('failed')
    expect(socket.closeCode.value).toBe(code)
    vi.advanceTimersByTime(60_000)
    expect(FakeSocket.instances).toHaveLength(1)
  })

  it('closes when its scope ends and does not reconnect', () => {
    const { socket, scope } = start()
    const s = last()
    s.open()
    scope.stop()
    expect(s.closedWith).toBe(1000)
    expect(socket.status.value).toBe('closed')
    vi.advanceTimersByTime(60_000)
    expect(FakeSocket.instances).toHaveLength(1)
  })

  it('switches sockets when the production id changes', async () => {
    const { id } = start()
    const first = last()
    first.open()
    id.value = 'p2'
    await nextTick()
    expect(first.closedWith).toBe(1000)
    expect(last().url).toBe('ws://test/ws/productions/p2/')
    // The old socket's late close must not trigger a reconnect.
    first.onclose?.({ code: 1006 })
    vi.advanceTimersByTime(10_000)
    expect(FakeSocket.instances).toHaveLength(2)
  })

  it('ignores frames that are not JSON messages', () => {
    const { socket } = start()
    const seen: SocketEvent[] = []
    socket.subscribe((e) => seen.push(e))
    last().open()
    last().onmessage?.({ data: 'not json' })
    last().message(42)
    expect(seen).toEqual([{ type: 'socket.open', reconnected: false }])
  })
})
