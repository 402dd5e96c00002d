import { describe, expect, it, vi } from 'vitest'
import { EventSync, SeqTracker, type SequencedMessage } from './sequence'

const created = (seq: number, id = 't1'): SequencedMessage => ({ type: 'turn.created', seq, turn: { id } })
const token = (seq: number, index: number, id = 't1'): SequencedMessage => ({ type: 'turn.token', seq, turn: id, index })
const done = (seq: number, id = 't1'): SequencedMessage => ({ type: 'turn.done', seq, turn: { id } })

describe('SeqTracker', () => {
  it('applies consecutive messages and drops ones already seen', () => {
    const s = new SeqTracker(10)
    expect(s.check(created(11))).toBe('apply')
    s.accept(created(11))
    expect(s.check(created(11))).toBe('stale')
    expect(s.check(created(9))).toBe('stale')
    expect(s.check(token(12, 0))).toBe('apply')
  })

  it('reports a gap when a seq is skipped', () => {
    const s = new SeqTracker(10)
    expect(s.check(created(12))).toBe('gap')
  })

  it('reports a gap when a token index is skipped', () => {
    const s = new SeqTracker(0)
    s.accept(created(1))
    expect(s.check(token(2, 1))).toBe('gap')
    expect(s.check(token(2, 0))).toBe('apply')
    s.accept(token(2, 0))
    expect(s.check(token(3, 2))).toBe('gap')
    expect(s.check(token(3, 1))).toBe('apply')
  })

  it('accepts any first index for a turn known only from a snapshot', () => {
    const s = new SeqTracker(40)
    expect(s.check(token(41, 17, 'mid-stream'))).toBe('apply')
    s.accept(token(41, 17, 'mid-stream'))
    expect(s.check(token(42, 19, 'mid-stream'))).toBe('gap')
  })

  it('forgets a turn once it is done', () => {
    const s = new SeqTracker(0)
    s.accept(created(1))
    s.accept(token(2, 0))
    s.accept(done(3))
    expect(s.check(token(4, 7))).toBe('apply')
  })

  it('lets messages without seq through (pong)', () => {
    expect(new SeqTracker(5).check({ type: 'pong' })).toBe('apply')
  })
})

function setup(snapshotSeq: number | (() => Promise<number>)) {
  const applied: SequencedMessage[] = []
  const resync = vi.fn(typeof snapshotSeq === 'number' ? () => Promise.resolve(snapshotSeq) : snapshotSeq)
  const sync = new EventSync<SequencedMessage>({
    apply: (m) => {
      applied.push(m)
      return true
    },
    resync,
  })
  return { sync, applied, resync }
}

describe('EventSync', () => {
  it('applies in-order messages without re-reading', () => {
    const { sync, applied, resync } = setup(0)
    sync.reset(5)
    sync.handle(created(6))
    sync.handle(token(7, 0))
    expect(applied.map((m) => m.seq)).toEqual([6, 7])
    expect(resync).not.toHaveBeenCalled()
  })

  it('re-reads on a seq gap and replays only what is newer than the snapshot', async () => {
    const { sync, applied, resync } = setup(8)
    sync.reset(5)
    sync.handle(created(6))
    sync.handle(token(8, 1)) // 7 was dropped → gap
    expect(resync).toHaveBeenCalledTimes(1)
    sync.handle(token(9, 2)) // arrives while re-reading: buffered
    await sync.resync()
    // seq 8 is in the snapshot (event_seq 8), 9 is newer.
    expect(applied.map((m) => m.seq)).toEqual([6, 9])
    expect(sync.tracker.lastSeq).toBe(9)
  })

  it('re-reads on a token index gap', async () => {
    const { sync, resync } = setup(3)
    sync.reset(0)
    sync.handle(created(1))
    sync.handle(token(2, 0))
    sync.handle(token(3, 2)) // index 1 missing although seq is consecutive
    expect(resync).toHaveBeenCalledTimes(1)
    await sync.resync()
    expect(sync.tracker.lastSeq).toBe(3)
  })

  it('re-reads when apply cannot place a message (unknown turn)', () => {
    const resync = vi.fn(() => Promise.resolve(1))
    const sync = new EventSync<SequencedMessage>({ apply: () => false, resync })
    sync.handle(token(1, 0, 'unknown'))
    expect(resync).toHaveBeenCalledTimes(1)
  })

  it('shares one re-read between concurrent triggers', async () => {
    let release!: (n: number) => void
    const { sync, resync } = setup(() => new Promise<number>((r) => (release = r)))
    const first = sync.resync()
    const second = sync.resync()
    expect(resync).toHaveBeenCalledTimes(1)
    release(4)
    await Promise.all([first, second])
    expect(sync.syncing).toBe(false)
  })

  it('does not loop when the snapshot lags behind buffered messages', async () => {
    const { sync, applied, resync } = setup(2)
    sync.reset(0)
    sync.handle(created(5)) // gap → resync (snapshot says 2)
    await sync.resync()
    expect(applied.map((m) => m.seq)).toEqual([5])
    expect(resync).toHaveBeenCalledTimes(1)
    sync.handle(token(6, 0))
    expect(applied.map((m) => m.seq)).toEqual([5, 6])
  })

  it('retries the re-read with the next message after a failure', async () => {
    const onError = vi.fn()
    const resync = vi.fn().mockRejectedValueOnce(new Error('offline')).mockResolvedValue(10)
    const sync = new EventSync<SequencedMessage>({ apply: () => true, resync, onError })
    await sync.resync()
    expect(onError).toHaveBeenCalled()
    sync.handle(created(11))
    expect(resync).toHaveBeenCalledTimes(2)
  })
})
