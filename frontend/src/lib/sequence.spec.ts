import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { classify, EventSync, type SyncRules } from './sequence'

/** Messages of a made-up protocol: numbered state events and deltas of named streams. */
type Msg =
  | { type: 'open'; seq: number; stream: string }
  | { type: 'close'; seq: number; stream: string }
  | { type: 'restart'; seq: number; stream: string }
  | { type: 'delta'; stream: string; index: number; delta: string }
  | { type: 'note' }

const open = (seq: number, stream = 's'): Msg => ({ type: 'open', seq, stream })
const close = (seq: number, stream = 's'): Msg => ({ type: 'close', seq, stream })
const restart = (seq: number, stream = 's'): Msg => ({ type: 'restart', seq, stream })
const delta = (index: number, text: string, stream = 's'): Msg => ({ type: 'delta', stream, index, delta: text })

interface Stream {
  text: string
  count: number
  closed: boolean
}

/** A local copy of the streams, the way a page's store would hold it. */
function fakeState() {
  const streams = new Map<string, Stream>()
  const rules: SyncRules<Msg> = {
    streams: {
      of: (m) => (m.type === 'delta' ? m.stream : undefined),
      position: (id) => {
        const s = streams.get(id)
        return s === undefined ? undefined : s.closed ? Infinity : s.count
      },
    },
  }
  const apply = (m: Msg): boolean => {
    if (m.type === 'open' || m.type === 'restart') streams.set(m.stream, { text: '', count: 0, closed: false })
    else if (m.type === 'close') {
      const s = streams.get(m.stream)
      if (s) s.closed = true
    } else if (m.type === 'delta') {
      const s = streams.get(m.stream)
      if (!s || m.index !== s.count) throw new Error(`delta ${m.index} applied out of order (at ${s?.count})`)
      s.text += m.delta
      s.count += 1
    }
    return true
  }
  const load = (snapshot: Record<string, Partial<Stream>>) => {
    streams.clear()
    for (const [id, s] of Object.entries(snapshot)) streams.set(id, { text: '', count: 0, closed: false, ...s })
  }
  return { streams, rules, apply, load, text: (id = 's') => streams.get(id)?.text }
}

interface Snap {
  seq: number
  streams?: Record<string, Partial<Stream>>
}

/** An EventSync whose re-read loads `next()` (a snapshot and its seq); `start` is loaded already. */
function setup(next: () => Snap | Promise<Snap>, start?: Snap) {
  const state = fakeState()
  const resync = vi.fn(async (_since: number | null) => {
    const snap = await next()
    state.load(snap.streams ?? {})
    return snap.seq
  })
  const applied: Msg[] = []
  const onError = vi.fn()
  const sync = new EventSync<Msg>({
    ...state.rules,
    apply: (m) => {
      applied.push(m)
      return state.apply(m)
    },
    resync,
    onError,
    retry: { baseMs: 400, maxMs: 5000, random: () => 1 },
  })
  if (start) {
    state.load(start.streams ?? {})
    sync.lastSeq = start.seq
  }
  return { sync, state, resync, applied, onError }
}

describe('classify', () => {
  const { rules, load } = fakeState()
  load({ s: { text: 'ab', count: 2 }, done: { closed: true, count: 3 } })

  it('applies the next seq, drops seen ones, and reports a skipped one as a gap', () => {
    expect(classify(open(11), 10, rules)).toBe('apply')
    expect(classify(open(10), 10, rules)).toBe('stale')
    expect(classify(open(3), 10, rules)).toBe('stale')
    expect(classify(open(12), 10, rules)).toBe('gap')
  })

  it('judges a delta by its index against the stream position, not by seq', () => {
    expect(classify(delta(0, 'a'), 10, rules)).toBe('stale')
    expect(classify(delta(1, 'b'), 10, rules)).toBe('stale')
    expect(classify(delta(2, 'c'), 10, rules)).toBe('apply')
    expect(classify(delta(3, 'd'), 10, rules)).toBe('gap')
  })

  it('drops deltas of a closed stream and reports an unknown stream as a gap', () => {
    expect(classify(delta(7, 'x', 'done'), 10, rules)).toBe('stale')
    expect(classify(delta(0, 'x', 'nobody'), 10, rules)).toBe('gap')
  })

  it('lets unnumbered messages through', () => {
    expect(classify({ type: 'note' }, 10, rules)).toBe('apply')
  })
})

describe('EventSync', () => {
  beforeEach(() => vi.useFakeTimers())
  afterEach(() => vi.useRealTimers())

  it('applies in-order messages without re-reading', () => {
    const { sync, state, resync } = setup(() => ({ seq: 0 }), { seq: 5 })
    sync.handle(open(6))
    sync.handle(delta(0, 'Hel'))
    sync.handle(delta(1, 'lo'))
    sync.handle(close(7))
    expect(state.text()).toBe('Hello')
    expect(sync.lastSeq).toBe(7)
    expect(resync).not.toHaveBeenCalled()
  })

  it('drops deltas a snapshot already holds (index < its count), then appends', () => {
    const { sync, state, resync } = setup(() => ({ seq: 0 }), { seq: 9, streams: { s: { text: 'One two ', count: 2 } } })
    sync.handle(delta(0, 'One '))
    sync.handle(delta(1, 'two '))
    sync.handle(delta(2, 'three'))
    expect(state.text()).toBe('One two three')
    expect(resync).not.toHaveBeenCalled()
  })

  it('re-reads exactly once on an index gap and replays what the snapshot lacks', async () => {
    const { sync, state, resync } = setup(() => ({ seq: 6, streams: { s: { text: 'a b ', count: 2 } } }), { seq: 6, streams: { s: { text: 'a ', count: 1 } } })
    sync.handle(delta(2, 'c ')) // index 1 was lost
    sync.handle(delta(3, 'd')) // arrives while re-reading
    expect(resync).toHaveBeenCalledTimes(1)
    expect(sync.syncing).toBe(true)
    await vi.runAllTimersAsync()
    expect(resync).toHaveBeenCalledTimes(1)
    expect(state.text()).toBe('a b c d')
    expect(sync.syncing).toBe(false)
  })

  it('re-reads on a seq gap and replays only the events newer than the snapshot', async () => {
    const { sync, applied, resync } = setup(() => ({ seq: 8, streams: { s: {}, t: {} } }), { seq: 5 })
    sync.handle(open(6, 's'))
    sync.handle(open(8, 't')) // 7 was lost
    expect(resync).toHaveBeenCalledWith(6)
    sync.handle(open(9, 'u')) // buffered
    await vi.runAllTimersAsync()
    expect(applied.map((m) => ('seq' in m ? m.seq : null))).toEqual([6, 9])
    expect(sync.lastSeq).toBe(9)
    expect(resync).toHaveBeenCalledTimes(1)
  })

  it('buffers during a re-read and replays without duplicating text', async () => {
    let release!: () => void
    const { sync, state } = setup(
      () => new Promise<Snap>((r) => (release = () => r({ seq: 1, streams: { s: { text: 'Hello, ', count: 2 } } }))),
      { seq: 1, streams: { s: { text: 'Hel', count: 1 } } },
    )
    void sync.resync() // e.g. after a reconnect
    // Deltas the snapshot will hold, and some it will not, arrive while it is read.
    sync.handle(delta(1, 'lo, '))
    sync.handle(delta(2, 'wor'))
    sync.handle(delta(1, 'lo, ')) // a duplicate on the wire
    sync.handle(delta(3, 'ld'))
    expect(state.text()).toBe('Hel')
    release()
    await vi.runAllTimersAsync()
    expect(state.text()).toBe('Hello, world')
    expect(sync.buffered).toBe(0)
  })

  it('resets a stream on restart: its deltas count from 0 again', () => {
    const { sync, state, resync } = setup(() => ({ seq: 0 }), { seq: 1, streams: { s: { text: 'Old te', count: 2 } } })
    sync.handle(restart(2))
    sync.handle(delta(0, 'New '))
    sync.handle(delta(1, 'text'))
    expect(state.text()).toBe('New text')
    expect(resync).not.toHaveBeenCalled()
  })

  it('re-reads again after a backoff when the snapshot lags the buffered deltas', async () => {
    // The stored text is checkpointed: the first snapshot holds 1 delta, the next 3.
    const snaps = [
      { seq: 4, streams: { s: { text: 'a', count: 1 } } },
      { seq: 4, streams: { s: { text: 'abc', count: 3 } } },
    ]
    const { sync, state, resync } = setup(() => snaps.shift()!, { seq: 4, streams: { s: { text: '', count: 0 } } })
    sync.handle(delta(3, 'd')) // 0..2 were lost
    await vi.advanceTimersByTimeAsync(0)
    expect(resync).toHaveBeenCalledTimes(1)
    expect(state.text()).toBe('a')
    expect(sync.syncing).toBe(true) // still waiting: no hole is skipped
    sync.handle(delta(4, 'e'))
    await vi.advanceTimersByTimeAsync(399)
    expect(resync).toHaveBeenCalledTimes(1) // not at once: the checkpoint needs time
    await vi.advanceTimersByTimeAsync(1)
    expect(resync).toHaveBeenCalledTimes(2)
    expect(state.text()).toBe('abcde')
    expect(sync.syncing).toBe(false)
  })

  it('answers requests made during a read with one more read, shared by all of them', async () => {
    let calls = 0
    const { sync, resync } = setup(() => ({ seq: ++calls }))
    const first = sync.resync()
    // Made while the first read runs (it may predate what they need to see): one more
    // read follows, and they share it.
    const second = sync.resync()
    const third = sync.resync()
    expect(resync).toHaveBeenCalledTimes(1)
    await Promise.all([first, second, third])
    expect(resync).toHaveBeenCalledTimes(2)
    expect(resync).toHaveBeenLastCalledWith(1)
    expect(sync.lastSeq).toBe(2)
    expect(sync.syncing).toBe(false)
  })

  it('retries a failed read with growing backoff, keeping the buffer', async () => {
    let fail = 2
    const { sync, state, resync, onError } = setup(
      () => (fail-- > 0 ? Promise.reject(new Error('offline')) : { seq: 1, streams: { s: { text: 'a', count: 1 } } }),
      { seq: 1, streams: { s: {} } },
    )
    sync.handle(delta(1, 'b')) // index 0 was lost
    await vi.advanceTimersByTimeAsync(0)
    expect(onError).toHaveBeenCalledTimes(1)
    expect(sync.syncing).toBe(true)
    await vi.advanceTimersByTimeAsync(400)
    expect(resync).toHaveBeenCalledTimes(2)
    await vi.advanceTimersByTimeAsync(799)
    expect(resync).toHaveBeenCalledTimes(2)
    await vi.advanceTimersByTimeAsync(1)
    expect(resync).toHaveBeenCalledTimes(3)
    expect(state.text()).toBe('ab')
    expect(sync.syncing).toBe(false)
  })

  it('ignores a read in flight when reset to another source', async () => {
    let release!: (snap: Snap) => void
    const { sync } = setup(() => new Promise<Snap>((r) => (release = r)))
    void sync.resync()
    sync.reset()
    release({ seq: 50, streams: { old: { text: 'other source' } } })
    await vi.runAllTimersAsync()
    expect(sync.lastSeq).toBeNull()
    expect(sync.syncing).toBe(false)
  })

  it('does nothing more once stopped', async () => {
    const { sync, resync, applied } = setup(() => ({ seq: 3 }), { seq: 1 })
    sync.stop()
    sync.handle(open(2))
    sync.handle(open(9))
    await sync.resync()
    await vi.runAllTimersAsync()
    expect(applied).toEqual([])
    expect(resync).not.toHaveBeenCalled()
  })

  it('re-reads when apply refuses a message it cannot place', async () => {
    const resync = vi.fn(() => Promise.resolve(1))
    const sync = new EventSync<Msg>({ apply: () => false, resync, retry: { random: () => 1 } })
    sync.lastSeq = 0
    sync.handle(open(1))
    expect(resync).toHaveBeenCalledTimes(1)
  })
})
