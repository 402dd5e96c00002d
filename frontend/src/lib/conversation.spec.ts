import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { ServerMessage, Turn } from '@/api/types'
import { makeTurn } from '@/test/factories'
import {
  applyMessage,
  emptyConversation,
  keepRestarts,
  mergeSnapshot,
  streamOf,
  streamParts,
  tokenPosition,
  upsertTurn,
  type ConversationState,
} from './conversation'
import { EventSync } from './sequence'

// Without `attempt`, as an older server sent it: the client still takes it.
const token = (turn: string, index: number, delta: string) => ({ type: 'turn.token', turn, index, delta }) as ServerMessage

describe('applyMessage', () => {
  it('records that a failed turn ended auto-play, and keeps it over a resync', () => {
    const state = emptyConversation()
    state.autoplayRemaining = 2
    applyMessage(state, { type: 'autoplay', seq: 1, autoplay_remaining: 1 })
    expect(state.autoplayStopped).toBeNull()
    const stop = { turn: 't1', error: 'The provider at http://127.0.0.1:9/v1 could not be reached: connection refused.' }
    expect(applyMessage(state, { type: 'autoplay', seq: 2, autoplay_remaining: 0, stopped_by: stop })).toBe(true)
    expect(state.autoplayRemaining).toBe(0)
    expect(state.autoplayStopped).toEqual(stop)
  })

  it('streams tokens into a turn and marks it streaming', () => {
    const state = emptyConversation()
    applyMessage(state, { type: 'turn.created', seq: 1, turn: makeTurn({ id: 't', status: 'pending' }) })
    applyMessage(state, token('t', 0, 'Hel'))
    applyMessage(state, token('t', 1, 'lo'))
    expect(state.turns[0]).toMatchObject({ content: 'Hello', status: 'streaming', token_count: 2 })
    applyMessage(state, { type: 'turn.done', seq: 4, turn: makeTurn({ id: 't', content: 'Hello.', status: 'done', completion_tokens: 2 }) })
    expect(state.turns[0]).toMatchObject({ content: 'Hello.', status: 'done', completion_tokens: 2 })
  })

  it('skips tokens a re-read turn already holds, then continues', () => {
    const state: ConversationState = { ...emptyConversation(), turns: [makeTurn({ id: 't', status: 'streaming', content: 'One two ', token_count: 2 })] }
    expect(applyMessage(state, token('t', 1, 'two '))).toBe(true)
    applyMessage(state, token('t', 2, 'three'))
    expect(state.turns[0]).toMatchObject({ content: 'One two three', token_count: 3 })
  })

  it('refuses a token past a hole, and one for an unknown turn (re-read then)', () => {
    const state: ConversationState = { ...emptyConversation(), turns: [makeTurn({ id: 't', status: 'streaming', content: 'a', token_count: 1 })] }
    expect(applyMessage(state, token('t', 2, 'c'))).toBe(false)
    expect(applyMessage(state, token('x', 0, 'a'))).toBe(false)
    expect(state.turns[0]?.content).toBe('a')
  })

  it('ignores late tokens of a finished turn', () => {
    const state: ConversationState = { ...emptyConversation(), turns: [makeTurn({ id: 't', status: 'done', content: 'Final.', token_count: 2 })] }
    expect(applyMessage(state, token('t', 2, ' more'))).toBe(true)
    expect(state.turns[0]?.content).toBe('Final.')
  })

  it('resets a restarted turn: no text, pending, counting from 0, with its attempt noted', () => {
    const state: ConversationState = {
      ...emptyConversation(),
      turns: [makeTurn({ id: 't', status: 'streaming', content: 'Half a sen', token_count: 3, directive: [{ role: 'system', content: 'S' }] })],
    }
    applyMessage(state, { type: 'turn.restarted', seq: 7, attempt: 2, turn: makeTurn({ id: 't', status: 'pending', content: '', token_count: 0 }) })
    expect(state.turns[0]).toMatchObject({ status: 'pending', content: '', token_count: 0 })
    expect(state.restarts).toEqual({ t: 2 })
    expect(tokenPosition(state, 't')).toBe(0)
    applyMessage(state, token('t', 0, 'Whole '))
    applyMessage(state, token('t', 1, 'sentence.'))
    expect(state.turns[0]).toMatchObject({ status: 'streaming', content: 'Whole sentence.' })
    applyMessage(state, { type: 'turn.done', seq: 8, turn: makeTurn({ id: 't', content: 'Whole sentence.', token_count: 2 }) })
    expect(state.restarts).toEqual({})
  })

  it('tracks autoplay_remaining', () => {
    const state = emptyConversation()
    applyMessage(state, { type: 'autoplay', seq: 1, autoplay_remaining: 3 })
    expect(state.autoplayRemaining).toBe(3)
  })
})

describe('tokenPosition', () => {
  it('is the count of an active turn, Infinity for a finished one, undefined for an unknown one', () => {
    const state: ConversationState = {
      ...emptyConversation(),
      turns: [makeTurn({ id: 'live', status: 'streaming', token_count: 4 }), makeTurn({ id: 'old', status: 'stopped', token_count: 9 })],
    }
    expect(tokenPosition(state, 'live')).toBe(4)
    expect(tokenPosition(state, 'old')).toBe(Infinity)
    expect(tokenPosition(state, 'nope')).toBeUndefined()
  })

  it('is 0 for a newer run of the turn and Infinity for an older one', () => {
    const state: ConversationState = {
      ...emptyConversation(),
      turns: [makeTurn({ id: 'live', status: 'streaming', token_count: 4, attempts: 1 })],
    }
    expect(tokenPosition(state, 'live', 1)).toBe(4)
    expect(tokenPosition(state, 'live', 2)).toBe(0)
    expect(tokenPosition(state, 'live', 0)).toBe(Infinity)
    expect(streamParts(streamOf({ type: 'turn.token', turn: 'live', attempt: 2, index: 0, delta: 'x' })!)).toEqual(['live', 2])
  })
})

describe('a turn.restarted that never arrived', () => {
  it("a newer run's first delta replaces the old run's text; its later deltas need a re-read", () => {
    const state: ConversationState = {
      ...emptyConversation(),
      turns: [makeTurn({ id: 't', status: 'streaming', content: 'Old run text', token_count: 3, attempts: 1 })],
    }
    const run = (attempt: number, index: number, delta: string): ServerMessage => ({
      type: 'turn.token',
      turn: 't',
      attempt,
      index,
      delta,
    })
    expect(applyMessage(state, run(1, 3, ' more'))).toBe(true)
    expect(applyMessage(state, run(2, 0, 'New'))).toBe(true)
    expect(state.turns[0]).toMatchObject({ content: 'New', token_count: 1, attempts: 2 })
    expect(applyMessage(state, run(1, 4, ' stale'))).toBe(true) // the dead run's late delta
    expect(state.turns[0]!.content).toBe('New')
    expect(applyMessage(state, run(3, 5, 'x'))).toBe(false) // mid-run of an unseen run: re-read
  })
})

describe('mergeSnapshot', () => {
  const local = [makeTurn({ id: 't', status: 'streaming', content: 'One two three', token_count: 3, created_at: '2025-01-01T00:00:02Z' })]
  const fresh = [
    makeTurn({ id: 't', status: 'streaming', content: 'One ', token_count: 1, created_at: '2025-01-01T00:00:02Z' }),
    makeTurn({ id: 'a', content: 'Earlier', created_at: '2025-01-01T00:00:01Z' }),
  ]

  it('keeps streamed text ahead of a lagging checkpoint when no event was missed', () => {
    const merged = mergeSnapshot(local, fresh, true)
    expect(merged.map((t) => t.id)).toEqual(['a', 't'])
    expect(merged[1]).toMatchObject({ content: 'One two three', token_count: 3 })
  })

  it('takes the snapshot when events were missed (a restart may hide among them)', () => {
    expect(mergeSnapshot(local, fresh, false)[1]).toMatchObject({ content: 'One ', token_count: 1 })
  })

  it('takes the snapshot when it holds more, or the turn is finished', () => {
    const done = [makeTurn({ id: 't', status: 'done', content: 'One.', token_count: 2 })]
    expect(mergeSnapshot(local, done, true)[0]).toMatchObject({ content: 'One.', status: 'done' })
  })

  it('keeps the "worker lost" note only for turns still active', () => {
    expect(keepRestarts({ t: 2, gone: 3 }, [...fresh, makeTurn({ id: 'gone', status: 'done' })])).toEqual({ t: 2 })
  })
})

describe('upsertTurn', () => {
  it('keeps turns ordered by creation', () => {
    const turns: Turn[] = []
    upsertTurn(turns, makeTurn({ id: 'b', created_at: '2025-01-01T00:00:02Z' }))
    upsertTurn(turns, makeTurn({ id: 'a', created_at: '2025-01-01T00:00:01Z' }))
    upsertTurn(turns, makeTurn({ id: 'c', created_at: '2025-01-01T00:00:03Z' }))
    expect(turns.map((t) => t.id)).toEqual(['a', 'b', 'c'])
  })

  it('ignores a late pending copy of a finished turn (POST answer after turn.done)', () => {
    const turns = [makeTurn({ id: 't', content: 'All done', status: 'done' })]
    upsertTurn(turns, makeTurn({ id: 't', status: 'pending' }))
    expect(turns[0]).toMatchObject({ content: 'All done', status: 'done' })
  })

  it('drops the empty directive of a pending turn so the finished one can be fetched', () => {
    const turns = [makeTurn({ id: 't', status: 'pending', directive: [] })]
    upsertTurn(turns, makeTurn({ id: 't', status: 'done', content: 'Hi' }))
    expect(turns[0]?.directive).toBeUndefined()
    const kept = [makeTurn({ id: 'u', status: 'done', directive: [{ role: 'system', content: 'S' }] })]
    upsertTurn(kept, makeTurn({ id: 'u', status: 'done' }))
    expect(kept[0]?.directive).toHaveLength(1)
  })

  it('keeps streamed text over the shorter checkpoint of a stop, until the final copy', () => {
    const turns = [makeTurn({ id: 't', content: 'One two three', token_count: 3, status: 'streaming' })]
    upsertTurn(turns, makeTurn({ id: 't', content: 'One ', token_count: 1, status: 'stopped' }))
    expect(turns[0]).toMatchObject({ content: 'One two three', token_count: 3, status: 'stopped' })
    upsertTurn(turns, makeTurn({ id: 't', content: 'One two three four', token_count: 4, status: 'stopped' }))
    expect(turns[0]).toMatchObject({ content: 'One two three four', token_count: 4 })
  })

  it('keeps streamed text over a shorter copy of a streaming turn', () => {
    const turns = [makeTurn({ id: 't', content: 'Hello wor', status: 'streaming' })]
    upsertTurn(turns, makeTurn({ id: 't', content: 'Hel', status: 'streaming' }))
    expect(turns[0]?.content).toBe('Hello wor')
  })
})

/**
 * A production on the server, as the backend runs it: state events numbered by `seq`,
 * deltas published at once with their index, the text checkpointed only now and then, a
 * lost worker's turn generated again from the start (`turn.restarted`).
 */
class FakeProduction {
  seq = 0
  autoplay = 0
  turns: Turn[] = []
  /** Every run's deltas per turn (the last is the current run). */
  runs = new Map<string, string[][]>()
  /** Published, not yet delivered. */
  wire: ServerMessage[] = []
  private clock = 0

  get active(): Turn | undefined {
    return this.turns.find((t) => t.status === 'pending' || t.status === 'streaming')
  }

  private publish(msg: ServerMessage) {
    this.wire.push(structuredClone(msg))
  }

  private event(build: (seq: number) => ServerMessage) {
    this.seq += 1
    this.publish(build(this.seq))
  }

  create() {
    const id = `t${this.turns.length + 1}`
    const turn = makeTurn({ id, status: 'pending', created_at: new Date(Date.UTC(2025, 0, 1, 0, 0, ++this.clock)).toISOString() })
    this.turns.push(turn)
    this.runs.set(id, [[]])
    this.event((seq) => ({ type: 'turn.created', seq, turn: { ...turn } }))
  }

  delta(text: string) {
    const turn = this.active!
    turn.status = 'streaming' // pending → streaming sends no event
    const run = this.runs.get(turn.id)!.at(-1)!
    this.publish({ type: 'turn.token', turn: turn.id, index: run.length, delta: text } as ServerMessage)
    run.push(text)
  }

  checkpoint() {
    const turn = this.active!
    const run = this.runs.get(turn.id)!.at(-1)!
    turn.content = run.join('')
    turn.token_count = run.length
  }

  restart() {
    const turn = this.active!
    Object.assign(turn, { status: 'pending', content: '', token_count: 0 })
    const runs = this.runs.get(turn.id)!
    runs.push([])
    this.event((seq) => ({ type: 'turn.restarted', seq, attempt: runs.length, turn: { ...turn } }))
  }

  finish() {
    const turn = this.active!
    this.checkpoint()
    turn.status = 'done'
    this.event((seq) => ({ type: 'turn.done', seq, turn: { ...turn } }))
  }

  setAutoplay(n: number) {
    this.autoplay = n
    this.event((seq) => ({ type: 'autoplay', seq, autoplay_remaining: n }))
  }

  /** GET /api/productions/<id>: its event_seq and its stored turns. */
  snapshot() {
    return structuredClone({ event_seq: this.seq, turns: this.turns, autoplay_remaining: this.autoplay })
  }
}

/** A small seeded PRNG, so a failing case can be replayed from its seed. */
function prng(seed: number) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** The page: its state fed by EventSync, re-reading the fake production's snapshot. */
function client(server: FakeProduction) {
  const state = emptyConversation()
  let reads = 0
  const sync = new EventSync<ServerMessage>({
    apply: (msg) => applyMessage(state, msg),
    streams: { of: (m) => (m.type === 'turn.token' ? m.turn : undefined), position: (id) => tokenPosition(state, id) },
    resync: async (since) => {
      reads += 1
      const snap = server.snapshot() // read now, answered later
      await Promise.resolve()
      state.turns = mergeSnapshot(state.turns, snap.turns, since !== null && snap.event_seq === since)
      state.autoplayRemaining = snap.autoplay_remaining
      state.restarts = keepRestarts(state.restarts, state.turns)
      return snap.event_seq
    },
    retry: { baseMs: 300, maxMs: 2000, random: () => 1 },
  })
  return { state, sync, reads: () => reads }
}

const view = (turns: Turn[]) => turns.map(({ id, status, content, token_count }) => ({ id, status, content, token_count }))

/** Every active turn's text must be a prefix of one of its runs, with its count of deltas. */
function assertNoDuplicatedText(state: ConversationState, server: FakeProduction) {
  for (const turn of state.turns) {
    if (turn.status !== 'pending' && turn.status !== 'streaming') continue
    const runs = server.runs.get(turn.id) ?? []
    const fits = runs.some((run) => run.slice(0, turn.token_count).join('') === turn.content && run.length >= turn.token_count)
    expect(fits, `turn ${turn.id}: ${JSON.stringify(turn.content)} (${turn.token_count}) is no prefix of a run`).toBe(true)
  }
}

describe('applying the events to an old snapshot equals a fresh snapshot', () => {
  beforeEach(() => vi.useFakeTimers())
  afterEach(() => vi.useRealTimers())

  async function simulate(seed: number, { dropRate, reconnectRate }: { dropRate: number; reconnectRate: number }) {
    const random = prng(seed)
    const server = new FakeProduction()
    // Some history before the page opens.
    server.create()
    server.delta('Hello ')
    server.finish()
    server.wire = []
    const page = client(server)
    await page.sync.resync() // the old snapshot
    let words = 0
    for (let step = 0; step < 400; step++) {
      const r = random()
      const turn = server.active
      if (r < 0.45) {
        // The server works.
        if (!turn) random() < 0.85 ? server.create() : server.setAutoplay(Math.floor(random() * 5))
        else {
          const op = random()
          if (op < 0.7) server.delta(`w${++words} `)
          else if (op < 0.85) server.checkpoint()
          else if (op < 0.9 && turn.status === 'streaming' && server.runs.get(turn.id)!.length < 3) server.restart()
          else if (turn.status === 'streaming') server.finish()
        }
      } else if (r < 0.9) {
        // The socket delivers (or the layer drops) the next message.
        const msg = server.wire.shift()
        if (msg && random() >= dropRate) page.sync.handle(msg)
      } else if (r < 0.9 + reconnectRate) {
        // The socket drops: what is in flight is lost; the reconnect re-reads.
        server.wire = []
        void page.sync.resync()
      } else {
        await vi.advanceTimersByTimeAsync(random() < 0.5 ? 0 : 400)
      }
      // With losses this can break for a moment: deltas carry no run, so after a dropped
      // turn.restarted the new run's deltas past the old count look like the old run's
      // until the next numbered event (or turn.done) repairs the text.
      if (dropRate === 0) assertNoDuplicatedText(page.state, server)
    }
    // The end: the turn finishes, one last event is numbered, everything is delivered.
    if (server.active?.status === 'pending') server.delta('last ')
    if (server.active) server.finish()
    server.setAutoplay(0)
    for (const msg of server.wire.splice(0)) page.sync.handle(msg)
    await vi.runAllTimersAsync()
    expect(page.sync.syncing).toBe(false)
    const fresh = server.snapshot()
    expect(view(page.state.turns)).toEqual(view(fresh.turns))
    expect(page.state.autoplayRemaining).toBe(fresh.autoplay_remaining)
    expect(page.sync.lastSeq).toBe(fresh.event_seq)
    return page
  }

  it('over a lossless socket, with no re-read beyond the first', async () => {
    for (let seed = 1; seed <= 40; seed++) {
      const page = await simulate(seed, { dropRate: 0, reconnectRate: 0 })
      expect(page.reads(), `seed ${seed}`).toBe(1)
    }
  })

  it('over a socket that drops messages and reconnects', async () => {
    for (let seed = 1; seed <= 150; seed++) await simulate(seed, { dropRate: 0.08, reconnectRate: 0.02 })
  })
})
