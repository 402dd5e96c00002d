import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { effectScope, nextTick, ref } from 'vue'
import { CLOSE_TOO_SLOW, useLiveSocket, type LiveSocketOptions } from './useLiveSocket'

class FakeSocket {
  static instances: FakeSocket[] = []
  readyState = 0
  sent: unknown[] = []
  onopen: (() => void) | null = null
  onmessage: ((e: { data: string }) => void) | null = null
  onclose: ((e: { code: number }) => void) | null = null
  onerror: (() => void) | null = null
  closedWith: number | null = null
  constructor(readonly url: string) {
    FakeSocket.instances.push(this)
  }
  send(data: string) {
    this.sent.push(JSON.parse(data))
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
  /** Accepted and joined: the server says so, and the client re-reads. */
  ready() {
    this.open()
    this.message({ type: 'ready' })
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

/** A tiny live page: numbered notes and one text stream per turn. */
type Msg =
  | { type: 'note'; seq: number; text: string }
  | { type: 'turn.token'; turn: string; index: number; delta: string }
  | { type: 'turn.restarted'; seq: number; turn: string }

interface Server {
  seq: number
  notes: string[]
  turns: Record<string, { text: string; count: number }>
}

function start(opts: Partial<LiveSocketOptions<Msg>> = {}, url = ref<string | null>('ws://test/ws/a/')) {
  const server: Server = { seq: 0, notes: [], turns: {} }
  // The page's state, and the REST read that replaces it with the server's.
  const page = { notes: [] as string[], turns: {} as Record<string, { text: string; count: number }> }
  const resync = vi.fn(async (_since: number | null) => {
    const snap = structuredClone(server)
    await Promise.resolve()
    page.notes = snap.notes
    page.turns = snap.turns
    return snap.seq
  })
  const apply = vi.fn((m: Msg) => {
    if (m.type === 'note') page.notes.push(m.text)
    else if (m.type === 'turn.restarted') page.turns[m.turn] = { text: '', count: 0 }
    else {
      const t = page.turns[m.turn]!
      t.text += m.delta
      t.count = m.index + 1
    }
  })
  const scope = effectScope()
  const live = scope.run(() =>
    useLiveSocket<Msg>(url, {
      resync,
      apply,
      streams: { of: (m) => (m.type === 'turn.token' ? m.turn : undefined), position: (id) => page.turns[id]?.count },
      WebSocketImpl: FakeSocket as unknown as typeof WebSocket,
      baseDelayMs: 100,
      maxDelayMs: 1000,
      random: () => 1,
      pingIntervalMs: 0,
      retry: { baseMs: 400, random: () => 1 },
      ...opts,
    }),
  )!
  return { live, scope, url, server, page, resync, apply }
}

describe('useLiveSocket', () => {
  beforeEach(() => {
    FakeSocket.instances = []
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('reads the state at once, connects, and reads it again once the server is ready', async () => {
    const { live, resync } = start()
    expect(last().url).toBe('ws://test/ws/a/')
    expect(live.status.value).toBe('connecting')
    expect(resync).toHaveBeenCalledTimes(1)
    expect(resync).toHaveBeenLastCalledWith(null)
    await vi.advanceTimersByTimeAsync(0)
    last().open()
    expect(live.status.value).toBe('open')
    expect(resync).toHaveBeenCalledTimes(1) // not joined yet: a snapshot now could miss events
    last().message({ type: 'ready' })
    expect(resync).toHaveBeenCalledTimes(2)
    expect(resync).toHaveBeenLastCalledWith(0)
    await vi.advanceTimersByTimeAsync(0)
    expect(live.syncing.value).toBe(false)
  })

  it('applies in-order events and tells subscribers until they unsubscribe', async () => {
    const { live, page } = start()
    last().ready()
    await vi.advanceTimersByTimeAsync(0)
    const seen: Msg[] = []
    const off = live.subscribe((m) => seen.push(m))
    last().message({ type: 'note', seq: 1, text: 'a' })
    off()
    last().message({ type: 'note', seq: 2, text: 'b' })
    expect(page.notes).toEqual(['a', 'b'])
    expect(seen).toEqual([{ type: 'note', seq: 1, text: 'a' }])
    expect(live.lastSeq.value).toBe(2)
  })

  it('reconnects with backoff that grows with jitter, and re-reads after the reconnect', async () => {
    const randoms = [0, 1, 0.5]
    const { live, resync } = start({ random: () => randoms.shift() ?? 1 })
    last().ready()
    await vi.advanceTimersByTimeAsync(0)
    expect(resync).toHaveBeenCalledTimes(2)

    // attempt 0: cap 100 ms, jitter 0 → 50 ms
    last().drop()
    expect(live.status.value).toBe('connecting')
    await vi.advanceTimersByTimeAsync(49)
    expect(FakeSocket.instances).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(FakeSocket.instances).toHaveLength(2)
    // attempt 1: cap 200 ms, jitter 1 → 200 ms
    last().drop()
    await vi.advanceTimersByTimeAsync(199)
    expect(FakeSocket.instances).toHaveLength(2)
    await vi.advanceTimersByTimeAsync(1)
    expect(FakeSocket.instances).toHaveLength(3)
    // attempt 2: cap 400 ms, jitter 0.5 → 300 ms
    last().drop()
    await vi.advanceTimersByTimeAsync(299)
    expect(FakeSocket.instances).toHaveLength(3)
    await vi.advanceTimersByTimeAsync(1)
    expect(FakeSocket.instances).toHaveLength(4)
    expect(live.attempts.value).toBe(3)

    last().ready()
    expect(live.attempts.value).toBe(0)
    expect(resync).toHaveBeenCalledTimes(3) // the reconnect re-reads what was missed
  })

  it('does not reset the backoff on a bare open (a server that accepts and drops)', async () => {
    const { live } = start()
    last().open()
    last().drop(1011)
    await vi.advanceTimersByTimeAsync(100)
    last().open()
    last().drop(1011)
    expect(live.attempts.value).toBe(2)
  })

  it.each([4401, 4403])('stops for good on close code %i: no reconnect, no re-read', async (code) => {
    const { live, resync } = start()
    last().ready()
    await vi.advanceTimersByTimeAsync(0)
    last().drop(code)
    expect(live.status.value).toBe('failed')
    expect(live.closeCode.value).toBe(code)
    await vi.advanceTimersByTimeAsync(60_000)
    expect(FakeSocket.instances).toHaveLength(1)
    await live.resync()
    expect(resync).toHaveBeenCalledTimes(2)
  })

  it('reconnects after 4408 (it read too slowly) and re-reads what it missed over REST', async () => {
    const { live, server, page, resync } = start()
    last().ready()
    await vi.advanceTimersByTimeAsync(0)
    last().message({ type: 'note', seq: 1, text: 'a' })
    Object.assign(server, { seq: 3, notes: ['a', 'b', 'c'] }) // what the server dropped for it
    last().drop(CLOSE_TOO_SLOW)
    expect(live.status.value).toBe('connecting')
    expect(live.closeCode.value).toBe(4408)
    await vi.advanceTimersByTimeAsync(100)
    expect(FakeSocket.instances).toHaveLength(2)
    last().ready()
    await vi.advanceTimersByTimeAsync(0)
    expect(resync).toHaveBeenLastCalledWith(1)
    expect(page.notes).toEqual(['a', 'b', 'c'])
    expect(live.status.value).toBe('open')
  })

  it('does not send a message over the size limit, and says why', async () => {
    const { live } = start({ maxMessageBytes: 100 })
    last().ready()
    const typed = { type: 'vapor', text: 'é'.repeat(45) } // 90 characters, over 100 bytes
    expect(live.send(typed)).toBe(false)
    expect(last().sent).toEqual([])
    expect(live.lastError.value).toEqual({ code: 'too_large', detail: 'Messages are at most 100 bytes.' })
    expect(live.send({ type: 'vapor' })).toBe(true)
    expect(last().sent).toEqual([{ type: 'vapor' }])
    expect(live.status.value).toBe('open')
  })

  it('re-reads exactly once on an index gap and replays the buffered deltas', async () => {
    const { live, server, page, resync } = start()
    server.turns.t = { text: '', count: 0 }
    last().ready()
    await vi.advanceTimersByTimeAsync(0)
    expect(resync).toHaveBeenCalledTimes(2)

    last().message({ type: 'turn.token', turn: 't', index: 0, delta: 'One ' })
    server.turns.t = { text: 'One two ', count: 2 } // the checkpoint the snapshot will hold
    last().message({ type: 'turn.token', turn: 't', index: 2, delta: 'three ' }) // 1 lost
    expect(resync).toHaveBeenCalledTimes(3)
    expect(live.syncing.value).toBe(true)
    last().message({ type: 'turn.token', turn: 't', index: 3, delta: 'four' })
    expect(page.turns.t!.text).toBe('One ') // buffered, not applied yet
    await vi.advanceTimersByTimeAsync(0)
    expect(page.turns.t).toEqual({ text: 'One two three four', count: 4 })
    expect(resync).toHaveBeenCalledTimes(3)
    expect(live.syncing.value).toBe(false)
  })

  it('re-reads on a seq gap and applies only what the snapshot lacks', async () => {
    const { server, page, resync } = start()
    last().ready()
    await vi.advanceTimersByTimeAsync(0)
    last().message({ type: 'note', seq: 1, text: 'a' })
    Object.assign(server, { seq: 3, notes: ['a', 'b', 'c'] })
    last().message({ type: 'note', seq: 3, text: 'c' }) // 2 lost
    last().message({ type: 'note', seq: 4, text: 'd' }) // buffered
    await vi.advanceTimersByTimeAsync(0)
    expect(resync).toHaveBeenCalledTimes(3)
    expect(resync).toHaveBeenLastCalledWith(1)
    expect(page.notes).toEqual(['a', 'b', 'c', 'd'])
  })

  it('starts a stream again after a restart', async () => {
    const { page } = start()
    last().ready()
    await vi.advanceTimersByTimeAsync(0)
    page.turns.t = { text: 'old run', count: 2 }
    last().message({ type: 'turn.restarted', seq: 1, turn: 't' })
    last().message({ type: 'turn.token', turn: 't', index: 0, delta: 'new' })
    expect(page.turns.t).toEqual({ text: 'new', count: 1 })
  })

  it('handles control frames itself: pong, and error frames kept as lastError', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined)
    const { live, apply } = start()
    last().ready()
    last().message({ type: 'pong' })
    last().message({ type: 'error', code: 'unknown_type', detail: 'Unknown message type.' })
    last().onmessage?.({ data: 'not json' })
    last().message(42)
    expect(apply).not.toHaveBeenCalled()
    expect(live.lastError.value).toEqual({ code: 'unknown_type', detail: 'Unknown message type.' })
    expect(warn).toHaveBeenCalled()
  })

  it('pings to keep the link alive and reconnects when nothing answers', async () => {
    const { live } = start({ pingIntervalMs: 1000 })
    const first = last()
    first.ready()
    await vi.advanceTimersByTimeAsync(1000)
    expect(first.sent).toEqual([{ type: 'ping' }])
    first.message({ type: 'pong' })
    await vi.advanceTimersByTimeAsync(1000)
    expect(first.sent).toHaveLength(2)
    // No answer to the second ping within a period: the link is dead.
    await vi.advanceTimersByTimeAsync(1000)
    expect(first.closedWith).toBe(4000)
    expect(live.status.value).toBe('connecting')
    await vi.advanceTimersByTimeAsync(100)
    expect(FakeSocket.instances).toHaveLength(2)
  })

  it('reconnects at once on request, and sends only when open', async () => {
    const { live } = start()
    expect(live.send({ type: 'ping' })).toBe(false)
    last().ready()
    expect(live.send({ type: 'ping' })).toBe(true)
    last().drop()
    live.reconnectNow()
    expect(FakeSocket.instances).toHaveLength(2)
  })

  it('closes when its scope ends and neither reconnects nor re-reads', async () => {
    const { live, scope, resync } = start()
    const s = last()
    s.ready()
    await vi.advanceTimersByTimeAsync(0)
    scope.stop()
    expect(s.closedWith).toBe(1000)
    expect(live.status.value).toBe('closed')
    s.message({ type: 'note', seq: 5, text: 'late' })
    await vi.advanceTimersByTimeAsync(60_000)
    expect(FakeSocket.instances).toHaveLength(1)
    expect(resync).toHaveBeenCalledTimes(2)
  })

  it('switches sockets and starts over when the URL changes', async () => {
    const { url, live, resync } = start()
    const first = last()
    first.ready()
    first.message({ type: 'note', seq: 1, text: 'a' })
    await vi.advanceTimersByTimeAsync(0)
    url.value = 'ws://test/ws/b/'
    await nextTick()
    expect(first.closedWith).toBe(1000)
    expect(last().url).toBe('ws://test/ws/b/')
    expect(resync).toHaveBeenLastCalledWith(null)
    // The old socket's late close must not trigger a reconnect.
    first.onclose?.({ code: 1006 })
    await vi.advanceTimersByTimeAsync(10_000)
    expect(FakeSocket.instances).toHaveLength(2)
    expect(live.status.value).toBe('connecting')
  })
})
