import { describe, expect, it } from 'vitest'
import type { FrameMessage } from '@/api/types'
import { makeFrameView, makeLiquid, makeNarrative, makeOutcome, makeSeat, makeWindow, SEATS } from '@/test/factories'
import {
  AI_THINKING_TTL_MS,
  aiSeatIds,
  applyEvent,
  facesFor,
  flagLine,
  feedEntries,
  formatCountdown,
  frameEnd,
  fromSnapshot,
  isNewerLiquid,
  liquidHeld,
  liquidReadable,
  mergeSnapshot,
  modeWords,
  narrativePosition,
  pendingLiquid,
  playerNotices,
  pscaleInfo,
  remainingSeconds,
  seatFailure,
  TYPING_TTL_MS,
  typingSeats,
  windowLength,
  withLocalLiquid,
  writingState,
  type FrameState,
} from './frame'

const T0 = Date.parse('2025-01-01T00:00:05Z')

/** Apply events in order, as the socket would, failing on a request to re-read. */
function play(state: FrameState, events: FrameMessage[], now = T0): FrameState {
  return events.reduce((s, e) => {
    const { state: next, resync } = applyEvent(s, e, now)
    expect(resync, `${e.type} asked for a re-read`).toBe(false)
    return next
  }, state)
}

// Without `shared`, as an older server sent it: the client infers it.
const token = (solid: string, index: number, delta: string, seat: string = SEATS.alice) =>
  ({ type: 'narrative.token', solid, seat, index, delta }) as FrameMessage

describe('frame state from a snapshot', () => {
  it('keeps live liquid and windows only, outcomes in seq order', () => {
    const s = fromSnapshot(
      makeFrameView({
        seq: 9,
        liquid: [makeLiquid({ id: 'l1' }), makeLiquid({ id: 'l2', status: 'withdrawn' })],
        outcomes: [makeOutcome({ id: 'o2', seq: 7 }), makeOutcome({ id: 'o1', seq: 3 })],
        windows: [makeWindow({ id: 'w1' }), makeWindow({ id: 'w2', status: 'fired' })],
      }),
    )
    expect(s.seq).toBe(9)
    expect(Object.keys(s.liquid)).toEqual(['l1'])
    expect(s.outcomes.map((o) => o.seq)).toEqual([3, 7])
    expect(Object.keys(s.windows)).toEqual(['w1'])
    expect(s.info).toMatchObject({ id: 'frame1', my_seats: [SEATS.alice], is_gm: false })
  })
})

describe('applying events', () => {
  it('an old snapshot plus the events after it equals a fresh snapshot', () => {
    // Bob's intention reaches Alice without its text (liquid_visibility own).
    const hidden = (l: ReturnType<typeof makeLiquid>) => {
      const { content: _c, refined: _r, ...rest } = l
      return rest
    }
    const bob1 = makeLiquid({ id: 'lb', seat: SEATS.bob, content: 'I hide.' })
    const mine = makeLiquid({ id: 'la', content: 'I wave.' })
    const analysed = { ...mine, pscale: -1, window_seconds: 22.5, capable: true, analysis_source: 'model', refined: 'Alice waves.' }
    const committed = { ...analysed, status: 'committed' as const, committed_at: '2025-01-01T00:00:05Z' }
    const window = makeWindow({ id: 'w1' })
    const outcome = makeOutcome({ id: 'o1', seq: 8 })
    const told = makeNarrative({ id: 'n1', text: 'You wave. Bob flinches.', token_count: 2, status: 'done', outcome_ids: ['o1'] })
    const consumed = { ...committed, status: 'consumed' as const }
    const tonyNow = makeSeat({ id: SEATS.tony, name: 'Tony', controller: 'open', user: null, assistant: null })

    const old = fromSnapshot(makeFrameView({ seq: 0, liquid_visibility: 'own' }))
    const events: FrameMessage[] = [
      { type: 'liquid.created', seq: 1, liquid: mine },
      { type: 'liquid.created', seq: 2, liquid: hidden(bob1) },
      { type: 'liquid.analyzed', seq: 3, liquid: analysed },
      { type: 'liquid.withdrawn', seq: 4, liquid: { ...hidden(bob1), status: 'withdrawn' } },
      { type: 'liquid.committed', seq: 5, liquid: committed },
      { type: 'window.opened', seq: 6, window },
      { type: 'window.fired', seq: 7, window: { ...window, status: 'firing' } },
      { type: 'outcome.created', seq: 8, outcome },
      { type: 'presence', seat: SEATS.bob, typing: true },
      token('n1', 0, 'You wave.'),
      token('n1', 1, ' Bob flinches.'),
      { type: 'liquid.consumed', seq: 9, liquid: consumed },
      { type: 'narrative.done', solid: told.id, seat: told.seat, narrative: told },
      { type: 'window.done', seq: 10, window: { ...window, status: 'fired' } },
      { type: 'seat.changed', seq: 11, seat: tonyNow },
    ]
    const fresh = fromSnapshot(
      makeFrameView({
        seq: 11,
        liquid_visibility: 'own',
        liquid: [consumed],
        outcomes: [outcome],
        narratives: [told],
        windows: [],
        seats: [...makeFrameView().seats.slice(0, 2), tonyNow],
      }),
    )
    expect(play(old, events)).toEqual(fresh)
  })

  it('merges narrative deltas by index: duplicates dropped, a hole asks for a re-read', () => {
    let s = fromSnapshot(makeFrameView({ narratives: [makeNarrative({ id: 'n1', text: 'One', token_count: 1 })] }))
    s = play(s, [token('n1', 1, ' two'), token('n1', 1, ' two'), token('n1', 0, 'One')])
    expect(s.narratives.n1).toMatchObject({ text: 'One two', token_count: 2 })
    expect(narrativePosition(s, 'n1')).toBe(2)
    const gap = applyEvent(s, token('n1', 5, ' six'))
    expect(gap.resync).toBe(true)
    expect(gap.state.narratives.n1?.text).toBe('One two')
  })

  it('starts a narrative at its first delta; a later delta of an unknown one needs a re-read', () => {
    const s = fromSnapshot(makeFrameView())
    expect(narrativePosition(s, 'n9')).toBeUndefined()
    expect(applyEvent(s, token('n9', 3, 'late')).resync).toBe(true)
    const started = applyEvent(s, token('n9', 0, 'It begins')).state
    expect(started.narratives.n9).toMatchObject({ text: 'It begins', token_count: 1, status: 'streaming', shared: false })
  })

  it('takes another seat’s stream reaching a player as the frame’s shared prose', () => {
    const s = play(fromSnapshot(makeFrameView({ mode: 'shared' })), [token('ns', 0, 'Everyone sees', SEATS.bob)])
    expect(s.narratives.ns?.shared).toBe(true)
    const gm = play(fromSnapshot(makeFrameView({ is_gm: true, my_seats: [] })), [token('nb', 0, 'Bob only', SEATS.bob)])
    expect(gm.narratives.nb?.shared).toBe(false)
  })

  it('drops deltas of a finished narrative', () => {
    const done = makeNarrative({ id: 'n1', text: 'All of it.', token_count: 3, status: 'done' })
    const s = play(fromSnapshot(makeFrameView({ narratives: [done] })), [token('n1', 3, ' more')])
    expect(s.narratives.n1?.text).toBe('All of it.')
    expect(narrativePosition(s, 'n1')).toBe(Infinity)
  })

  it('drops a restarted narrative’s half text: the new run streams clean, as a fresh snapshot has it', () => {
    // The worker died two deltas in; the rerun writes the pass's narrative under a new id.
    const cut = makeNarrative({ id: 'n1', text: 'The door', token_count: 1 })
    const other = makeNarrative({ id: 'nb', seat: SEATS.bob, text: 'Bob’s own.', token_count: 1, status: 'done' })
    const old = fromSnapshot(makeFrameView({ seq: 4, narratives: [cut, other] }))
    const whole = makeNarrative({ id: 'n2', text: 'It opens.', token_count: 2, status: 'done' })
    const s = play(old, [
      token('n1', 1, ' creaks'),
      { type: 'narrative.restarted', solid: 'n1', seat: SEATS.alice, shared: false },
      token('n2', 0, 'It'),
      token('n2', 1, ' opens.'),
    ])
    expect(s.narratives.n1).toBeUndefined()
    expect(s.narratives.n2).toMatchObject({ text: 'It opens.', status: 'streaming' })
    expect(feedEntries(s).map((e) => e.key)).toEqual(['n:nb', 'n:n2']) // one story of hers, not two
    const done = play(s, [{ type: 'narrative.done', solid: 'n2', seat: SEATS.alice, narrative: whole }])
    expect(done).toEqual(fromSnapshot(makeFrameView({ seq: 4, narratives: [other, whole] })))
    // A late delta of the dead run is no new stream: it has no place (the store drops it).
    expect(narrativePosition(done, 'n1')).toBeUndefined()
  })

  it('keeps outcomes unique and in seq order', () => {
    const a = makeOutcome({ id: 'a', seq: 2 })
    const s = play(fromSnapshot(makeFrameView({ seq: 1 })), [
      { type: 'outcome.created', seq: 2, outcome: a },
      { type: 'outcome.created', seq: 2, outcome: a },
    ])
    expect(s.outcomes.map((o) => o.id)).toEqual(['a'])
  })

  it('shows a player a held outcome as a placeholder, then the outcome once released, and drops a discarded one', () => {
    const placeholder = makeOutcome({ id: 'h', seq: 2, held: true, seat: null, actions_resolved: [], world_facts: [], interrupts: [], witnesses: [] })
    const whole = makeOutcome({ id: 'h', seq: 2, released_at: '2025-01-01T00:01:00Z', world_facts: ['It is out.'] })
    const s = play(fromSnapshot(makeFrameView({ seq: 1 })), [
      { type: 'outcome.created', seq: 2, outcome: placeholder },
      { type: 'outcome.released', seq: 3, outcome: whole },
    ])
    expect(s.outcomes).toEqual([whole])
    const other = makeOutcome({ id: 'x', seq: 4, held: true, seat: null, actions_resolved: [], world_facts: [], interrupts: [], witnesses: [] })
    const gone = play(s, [
      { type: 'outcome.created', seq: 4, outcome: other },
      { type: 'outcome.discarded', seq: 5, outcome: 'x' },
    ])
    expect(gone.outcomes.map((o) => o.id)).toEqual(['h'])
    // A spectator never saw it held: the release is their first sight of it.
    expect(play(fromSnapshot(makeFrameView({ seq: 2 })), [{ type: 'outcome.released', seq: 3, outcome: whole }]).outcomes).toEqual([whole])
  })

  it('re-reads on a rewind or a restore: what was read may be gone or back', () => {
    const start = fromSnapshot(makeFrameView({ seq: 4, outcomes: [makeOutcome({ id: 'a', seq: 2 }), makeOutcome({ id: 'b', seq: 3 })] }))
    for (const type of ['frame.rewound', 'frame.restored'] as const) {
      const applied = applyEvent(start, { type, seq: 5, rewind: { id: 1, kind: 'rewind', to_seq: 2, restored: type === 'frame.restored' } })
      expect(applied.resync).toBe(true)
      expect(applied.state.seq).toBe(5)
    }
  })

  it('takes the GM’s edits: unnumbered while held (with the flags), numbered once released (flags kept)', () => {
    const flag = { kind: 'internal_truth', owner: 'Bob', excerpt: 'x' }
    const held = makeOutcome({ id: 'h', seq: 2, held: true, flags: [flag] })
    const start = fromSnapshot(makeFrameView({ seq: 2, is_gm: true, outcomes: [held] }))
    const edited = { ...held, world_facts: ['Calm.'], flags: [], edited_at: '2025-01-01T00:02:00Z' }
    const s = play(start, [{ type: 'outcome.edited', outcome: edited }])
    expect(s.seq).toBe(2)
    expect(s.outcomes[0]).toEqual(edited)
    const { flags: _f, ...publicBody } = { ...edited, held: false, world_facts: ['Loud.'] }
    const after = play(s, [{ type: 'outcome.edited', seq: 3, outcome: publicBody }])
    expect(after.outcomes[0]).toMatchObject({ world_facts: ['Loud.'], held: false, flags: [] })
  })

  it('keeps the guard’s flags on an AI seat’s intention beside those the snapshot brought', () => {
    const flag = { kind: 'secret', owner: 'Bob', excerpt: 'repeats Tony’s internal truth' }
    const s = play(fromSnapshot(makeFrameView({ seq: 1, liquid_flags: { l1: [flag] } })), [
      { type: 'liquid.flagged', liquid: 'l2', flags: [flag, flag] },
    ])
    expect(s.info.liquid_flags).toEqual({ l1: [flag], l2: [flag, flag] })
  })

  it('shows a player a held AI intention without its words, then the words once the GM releases it', () => {
    // What Alice's socket brings of Tony's held intention in a frame that shows liquid to all.
    const { content: _c, refined: _r, capable_reason: _cr, analysis_note: _n, ...placeholder } = makeLiquid({ id: 'lt', seat: SEATS.tony, author: null, held: true })
    const start = fromSnapshot(makeFrameView({ seq: 1, liquid_visibility: 'all', liquid: [placeholder] }))
    expect(liquidHeld(start.liquid.lt!)).toBe(true)
    expect(liquidReadable(start.liquid.lt!)).toBe(false)
    const released = { ...placeholder, held: false, author: 1, status: 'committed' as const, committed_at: '2025-01-01T00:00:04Z', content: 'Tony opens the door.' }
    const s = play(start, [{ type: 'liquid.committed', seq: 2, liquid: released }])
    expect(s.liquid.lt).toEqual(released)
    expect(liquidHeld(s.liquid.lt!)).toBe(false)
    expect(s).toEqual(fromSnapshot(makeFrameView({ seq: 2, liquid_visibility: 'all', liquid: [released] })))
  })

  it('drops a regenerated AI intention with its flags and takes the new one, as a fresh snapshot has them', () => {
    const flag = { kind: 'internal_truth', owner: 'Bob', excerpt: 'bob-secret' }
    const held = makeLiquid({ id: 'l1', seat: SEATS.tony, author: null, held: true, content: 'Tony names bob-secret.' })
    const start = fromSnapshot(makeFrameView({ seq: 3, is_gm: true, my_seats: [], liquid: [held], liquid_flags: { l1: [flag] } }))
    const again = makeLiquid({ id: 'l2', seat: SEATS.tony, author: null, content: 'Tony shrugs.', submitted_at: '2025-01-01T00:00:09Z' })
    const s = play(start, [
      { type: 'liquid.withdrawn', seq: 4, liquid: { ...held, status: 'withdrawn' } },
      { type: 'liquid.created', seq: 5, liquid: again },
    ])
    expect(Object.keys(s.liquid)).toEqual(['l2'])
    expect(s).toEqual(fromSnapshot(makeFrameView({ seq: 5, is_gm: true, my_seats: [], liquid: [again], liquid_flags: {} })))
    // The GM's own regenerate answers before the socket: the row and its flags leave at once.
    const local = withLocalLiquid(start, { ...held, status: 'withdrawn' })
    expect(local.liquid).toEqual({})
    expect(local.info.liquid_flags).toEqual({})
  })

  it('counts state.changed per seat (a state drawer re-reads when it moves), unnumbered; a re-read moves them all', () => {
    const s = play(fromSnapshot(makeFrameView({ seq: 1 })), [
      { type: 'state.changed', seat: SEATS.alice },
      { type: 'state.changed', seat: SEATS.alice },
      { type: 'state.changed', seat: SEATS.bob },
    ])
    expect(s.stateChanged).toEqual({ [SEATS.alice]: 2, [SEATS.bob]: 1 })
    expect(s.seq).toBe(1)
    expect(mergeSnapshot(s, makeFrameView({ seq: 1 })).stateChanged).toEqual({ [SEATS.alice]: 3, [SEATS.bob]: 2 })
  })
})

describe('table talk', () => {
  it('adds each message once, in the order said, and a snapshot brings them back', () => {
    const hi = { id: 't1', kind: 'say' as const, seat: SEATS.bob, author: 'bob', gm: false, text: 'brb', created_at: '2025-01-01T00:00:01Z' }
    const gm = { id: 't2', kind: 'say' as const, seat: null, author: 'gm', gm: true, text: 'Ten minutes.', created_at: '2025-01-01T00:00:02Z' }
    const state = play(fromSnapshot(makeFrameView({ seq: 1 })), [
      { type: 'talk.created', talk: hi, seq: 2 },
      { type: 'talk.created', talk: gm, seq: 3 },
      { type: 'talk.created', talk: hi, seq: 4 }, // the same message again (a local copy raced it)
    ])
    expect(state.talk.map((t) => t.id)).toEqual(['t1', 't2'])
    expect(fromSnapshot(makeFrameView({ talk: [hi, gm] })).talk).toEqual(state.talk)
    expect(fromSnapshot(makeFrameView()).talk).toEqual([]) // a server without table talk
  })
})

describe('world content', () => {
  it('adds entries in order and an edit replaces its entry in place', () => {
    const entry = (id: string, description: string, edited = false) => ({
      id,
      type: 'location' as const,
      name: `Place ${id}`,
      data: { description },
      pscale: 0,
      edited,
      source_liquid: null,
      created_at: '2025-01-01T00:00:01Z',
    })
    const state = play(fromSnapshot(makeFrameView({ seq: 1, content: [entry('c1', 'Fog.')] })), [
      { type: 'content.added', content: entry('c2', 'Gulls.'), seq: 2 },
      { type: 'content.edited', content: entry('c1', 'Burnt down.', true), seq: 3 },
      { type: 'content.added', content: entry('c2', 'Gulls.'), seq: 4 }, // the GM's local copy raced it
    ])
    expect(state.content.map((c) => [c.id, c.data.description, c.edited])).toEqual([
      ['c1', 'Burnt down.', true],
      ['c2', 'Gulls.', false],
    ])
    expect(state.seq).toBe(4)
  })
})

describe('re-reading mid-stream', () => {
  it('keeps deltas streamed past the checkpoint, and replaying them does not double the text', () => {
    let local = fromSnapshot(makeFrameView({ seq: 4, narratives: [makeNarrative({ id: 'n1' })] }))
    local = play(local, [token('n1', 0, 'A'), token('n1', 1, 'B'), token('n1', 2, 'C')])
    // The server's checkpoint holds two deltas; a state event was missed meanwhile (seq 5).
    const merged = mergeSnapshot(local, makeFrameView({ seq: 5, narratives: [makeNarrative({ id: 'n1', text: 'AB', token_count: 2 })] }))
    expect(merged.narratives.n1).toMatchObject({ text: 'ABC', token_count: 3 })
    // The socket's buffer is replayed on top: what the state holds is dropped, the rest appended.
    const replayed = play(merged, [token('n1', 2, 'C'), token('n1', 3, 'D')])
    expect(replayed.narratives.n1).toMatchObject({ text: 'ABCD', token_count: 4 })
  })

  it('takes the stored text when it reaches further, and the finished narrative once done', () => {
    const local = play(fromSnapshot(makeFrameView({ narratives: [makeNarrative({ id: 'n1' })] })), [token('n1', 0, 'A')])
    const ahead = mergeSnapshot(local, makeFrameView({ narratives: [makeNarrative({ id: 'n1', text: 'ABC', token_count: 3 })] }))
    expect(ahead.narratives.n1?.text).toBe('ABC')
    const done = mergeSnapshot(local, makeFrameView({ narratives: [makeNarrative({ id: 'n1', text: 'Whole.', token_count: 1, status: 'done' })] }))
    expect(done.narratives.n1).toMatchObject({ text: 'Whole.', status: 'done' })
  })

  it('forgets a local state of another frame', () => {
    const other = fromSnapshot(makeFrameView({ id: 'other', narratives: [makeNarrative({ id: 'x', text: 'zzz', token_count: 9 })] }))
    expect(mergeSnapshot(other, makeFrameView()).narratives).toEqual({})
  })
})

describe('countdowns', () => {
  const open = makeWindow({ id: 'w1', expires_at: new Date(T0 + 30_000).toISOString() })

  it('count down from expires_at', () => {
    expect(remainingSeconds(open, T0)).toBe(30)
    expect(remainingSeconds(open, T0 + 12_500)).toBe(17.5)
    expect(remainingSeconds(open, T0 + 99_000)).toBe(0)
    expect(remainingSeconds({ ...open, status: 'firing' }, T0)).toBeNull()
  })

  it('freeze on pause and run again on resume, as the server says', () => {
    let s = fromSnapshot(makeFrameView({ seq: 3, windows: [open] }))
    s = play(s, [{ type: 'frame.paused', seq: 4, status: 'paused', windows: [{ ...open, expires_at: null, remaining_seconds: 20 }] }])
    expect(s.info.status).toBe('paused')
    const w = s.windows.w1!
    expect(remainingSeconds(w, T0)).toBe(20)
    expect(remainingSeconds(w, T0 + 60_000)).toBe(20) // frozen
    const resumedAt = T0 + 60_000
    s = play(s, [{ type: 'frame.resumed', seq: 5, status: 'open', windows: [{ ...open, expires_at: new Date(resumedAt + 20_000).toISOString() }] }])
    expect(remainingSeconds(s.windows.w1!, resumedAt + 5_000)).toBe(15)
  })

  it('freeze locally and ask for a re-read when the pause does not list the windows', () => {
    const s = fromSnapshot(makeFrameView({ seq: 3, windows: [open] }))
    // Without `windows`, as an older server sent them.
    const paused = applyEvent(s, { type: 'frame.paused', seq: 4, status: 'paused' } as FrameMessage, T0 + 10_000)
    expect(paused.resync).toBe(true)
    expect(paused.state.windows.w1).toMatchObject({ expires_at: null, remaining_seconds: 20 })
    expect(remainingSeconds(paused.state.windows.w1!, T0 + 50_000)).toBe(20)
    const resumed = applyEvent(paused.state, { type: 'frame.resumed', seq: 5, status: 'open' } as FrameMessage, T0 + 50_000)
    expect(resumed.resync).toBe(true)
    expect(remainingSeconds(resumed.state.windows.w1!, T0 + 55_000)).toBe(15)
  })

  it('read as a clock', () => {
    expect([7.2, 60, 83, 3720].map(formatCountdown)).toEqual(['8 s', '1:00', '1:23', '1 h 02 min'])
  })
})

describe('what a player reads', () => {
  it('sees that someone else intends something, not what, when the frame hides it', () => {
    const { content: _c, refined: _r, ...withoutText } = makeLiquid({ id: 'lb', seat: SEATS.bob })
    const s = play(fromSnapshot(makeFrameView({ liquid_visibility: 'own' })), [{ type: 'liquid.created', seq: 1, liquid: withoutText }])
    expect(liquidReadable(s.liquid.lb!)).toBe(false)
    expect(liquidReadable(makeLiquid({ id: 'la' }))).toBe(true)
  })

  it('is told why their window ended early, until their narrative arrives', () => {
    const w = makeWindow({ id: 'w1' })
    let s = fromSnapshot(makeFrameView({ seq: 1, windows: [w] }))
    s = play(s, [
      { type: 'outcome.created', seq: 2, outcome: makeOutcome({ id: 'o1', seq: 2, seat: SEATS.bob, interrupts: [{ seat: SEATS.alice, reason: 'Bob shoves you.' }] }) },
      { type: 'window.cancelled', seq: 3, window: { ...w, status: 'cancelled' }, cause: { kind: 'interrupt' as const, outcome: 'o1', reason: 'Bob shoves you.' } },
      { type: 'window.fired', seq: 4, window: makeWindow({ id: 'w2', status: 'firing' }) },
    ])
    expect(playerNotices(s, { accessEnded: false }).find((n) => n.key === 'interrupted')?.text).toContain('Bob shoves you.')
    const stumbled = makeNarrative({ id: 'n1', status: 'done', text: 'You stumble.' })
    s = play(s, [{ type: 'narrative.done', solid: stumbled.id, seat: stumbled.seat, narrative: stumbled }])
    expect(playerNotices(s, { accessEnded: false })).toEqual([])
  })

  it('is not told of an interrupt when the GM cancels their window, even after an old interrupt', () => {
    // An interrupt long ago (before this window opened), then the GM cancels the window.
    const old = makeOutcome({ id: 'o1', seq: 2, seat: SEATS.bob, created_at: '2025-01-01T00:00:01Z', interrupts: [{ seat: SEATS.alice, reason: 'Bob shoves you.' }] })
    const w = makeWindow({ id: 'w1', opened_at: '2025-01-01T00:00:05Z' })
    let s = fromSnapshot(makeFrameView({ seq: 2, outcomes: [old], windows: [w] }))
    s = play(s, [{ type: 'window.cancelled', seq: 3, window: { ...w, status: 'cancelled' }, cause: { kind: 'gm' } }])
    expect(s.interrupted).toEqual({})
    expect(playerNotices(s, { accessEnded: false })).toEqual([])
  })

  it('reads the reason of an interrupt without doubling its full stop', () => {
    const w = makeWindow({ id: 'w1' })
    const s = play(fromSnapshot(makeFrameView({ seq: 1, windows: [w] })), [
      { type: 'outcome.created', seq: 2, outcome: makeOutcome({ id: 'o1', seq: 2, seat: SEATS.bob, interrupts: [{ seat: SEATS.alice, reason: 'Bob shoves you.' }] }) },
      { type: 'window.cancelled', seq: 3, window: { ...w, status: 'cancelled' }, cause: { kind: 'interrupt' as const, outcome: 'o1', reason: 'Bob shoves you.' } },
    ])
    expect(playerNotices(s, { accessEnded: false }).find((n) => n.key === 'interrupted')?.text).toBe(
      'Your window ended early: Bob shoves you. Your character reacts now.',
    )
  })

  it('is told their pass failed and that the GM can retry; the retry clears it', () => {
    const w = makeWindow({ id: 'w1', status: 'firing' })
    let s = fromSnapshot(makeFrameView({ seq: 1, windows: [w] }))
    s = play(s, [
      { type: 'window.failed', seq: 2, window: { ...w, status: 'failed' } },
      { type: 'pass.failed', seq: 3, pass: { id: 'p1', seat: SEATS.alice, kind: 'medium', trigger: 'expiry', status: 'failed', error: 'Model unreachable.' } },
    ])
    expect(seatFailure(s, SEATS.alice)).toEqual({ error: 'Model unreachable.' })
    expect(playerNotices(s, { accessEnded: false }).map((n) => n.key)).toEqual(['failed'])
    expect(playerNotices(s, { accessEnded: false })[0]?.text).toBe('Model unreachable. Nothing you wrote is lost: your intention waits.')
    // A re-read keeps the reason while the window is still failed.
    const reread = mergeSnapshot(s, makeFrameView({ seq: 3, windows: [{ ...w, status: 'failed' }] }))
    expect(seatFailure(reread, SEATS.alice)?.error).toBe('Model unreachable.')
    s = play(reread, [{ type: 'window.fired', seq: 4, window: w }])
    expect(seatFailure(s, SEATS.alice)).toBeNull()
  })

  it("reads the server's generic reason for a failed pass as it is, and a default without one", () => {
    const w = makeWindow({ id: 'w1', status: 'firing' })
    const failed = { type: 'window.failed' as const, seq: 2, window: { ...w, status: 'failed' as const } }
    const generic = 'The narrator could not resolve this moment; the GM can retry it.'
    const told = play(fromSnapshot(makeFrameView({ seq: 1, windows: [w] })), [
      failed,
      { type: 'pass.failed', seq: 3, pass: { id: 'p1', seat: SEATS.alice, kind: 'medium', trigger: 'expiry', status: 'failed', error: generic } },
    ])
    expect(playerNotices(told, { accessEnded: false })[0]?.text).toBe(`${generic} Nothing you wrote is lost: your intention waits.`)
    const untold = play(fromSnapshot(makeFrameView({ seq: 1, windows: [w] })), [failed])
    expect(playerNotices(untold, { accessEnded: false })[0]?.text).toBe(
      'Your scene could not be written; the GM can retry it. Nothing you wrote is lost: your intention waits.',
    )
  })

  it('is told when they were removed and when the frame is paused or closed', () => {
    const s = fromSnapshot(makeFrameView({ status: 'paused' }))
    expect(playerNotices(s, { accessEnded: true }).map((n) => n.key)).toEqual(['removed', 'paused'])
    const kicked = play(fromSnapshot(makeFrameView({ status: 'closed' })), [
      { type: 'seat.changed', seq: 1, seat: makeSeat({ id: SEATS.alice, name: 'Alice', controller: 'open', user: null }) },
    ])
    expect(playerNotices(kicked, { accessEnded: false }).map((n) => n.key)).toEqual(['removed', 'closed'])
  })

  it('reads a frame that ended for good (4404) as closed by its GM, or deleted', () => {
    expect(frameEnd(fromSnapshot(makeFrameView({ status: 'closed' })))).toMatchObject({ kind: 'ended', title: 'This scene has ended' })
    expect(frameEnd(fromSnapshot(makeFrameView({ status: 'open' })))).toMatchObject({ kind: 'deleted', title: 'This scene was deleted' })
    expect(frameEnd(fromSnapshot(makeFrameView({ status: 'closed' })), { missing: true }).kind).toBe('deleted')
    expect(frameEnd(null).kind).toBe('deleted')
  })

  it('numbers outcomes 1, 2, 3… in seq order, whatever their seq and wherever narratives fall', () => {
    const at = (m: number) => `2025-01-01T00:0${m}:00Z`
    const state = fromSnapshot(
      makeFrameView({
        seq: 42,
        outcomes: [makeOutcome({ id: 'o29', seq: 29, created_at: at(2) }), makeOutcome({ id: 'o12', seq: 12, created_at: at(1) }), makeOutcome({ id: 'o42', seq: 42, created_at: at(3) })],
        narratives: [makeNarrative({ id: 'n1', created_at: at(1) })],
      }),
    )
    const numbers = feedEntries(state).flatMap((e) => (e.kind === 'outcome' ? [[e.outcome.seq, e.number]] : []))
    expect(numbers).toEqual([
      [12, 1],
      [29, 2],
      [42, 3],
    ])
    const later = play(state, [{ type: 'outcome.created', seq: 50, outcome: makeOutcome({ id: 'o50', seq: 50, created_at: at(4) }) } as FrameMessage])
    expect(feedEntries(later).filter((e) => e.kind === 'outcome').map((e) => (e.kind === 'outcome' ? e.number : 0))).toEqual([1, 2, 3, 4])
  })

  it('reads outcomes and narratives in time order, bones before flesh, a narrative not yet stored last', () => {
    const s = fromSnapshot(
      makeFrameView({
        outcomes: [makeOutcome({ id: 'o1', seq: 1, created_at: '2025-01-01T00:00:10Z' }), makeOutcome({ id: 'o2', seq: 4, created_at: '2025-01-01T00:00:30Z' })],
        narratives: [
          makeNarrative({ id: 'n1', created_at: '2025-01-01T00:00:10Z', status: 'done' }),
          makeNarrative({ id: 'n2', created_at: '2025-01-01T00:00:20Z', status: 'done' }),
        ],
      }),
    )
    const live = play(s, [token('n3', 0, '…')])
    expect(feedEntries(live).map((e) => e.key)).toEqual(['o:o1', 'n:n1', 'n:n2', 'o:o2', 'n:n3'])
  })
})

describe('small readings', () => {
  it('says a shared frame is one story for everyone, never "your own story"', () => {
    const shared = modeWords('shared')
    for (const text of Object.values(shared)) expect(text).not.toMatch(/own stor|only their story/)
    expect(shared.badge).toBe('shared story')
    expect(shared.start).toContain('same story')
    const own = modeWords('per_character')
    expect(own.badge).toBe('own stories')
    expect(own.start).toContain('your own story')
  })

  it('gives each time scale its meaning', () => {
    expect(pscaleInfo(-1)).toEqual({ label: '−1', meaning: 'about a minute' })
    expect(pscaleInfo(0).meaning).toBe('5–10 minutes')
    expect(pscaleInfo(2)).toEqual({ label: '+2', meaning: 'about a day' })
  })

  it('knows a window’s real length from the tempo and mode', () => {
    const l = makeLiquid({ id: 'l', window_seconds: 22.5 })
    expect(windowLength(l, { mode: 'per_character', tempo: 2 })).toBe(45)
    expect(windowLength(l, { mode: 'shared', tempo: 2 })).toBe(0)
    expect(windowLength({ ...l, window_seconds: null }, { mode: 'per_character', tempo: 1 })).toBeNull()
  })

  it('expires typing presence', () => {
    expect([...typingSeats({ a: 1000, b: 9000 }, 10_000)]).toEqual(['b'])
  })

  it("keeps an AI seat thinking until the server says it is done, or for minutes at most", () => {
    const ai = aiSeatIds([makeSeat({ id: 'a', name: 'Tony', controller: 'ai', user: null }), makeSeat({ id: 'b', name: 'Bob' })])
    expect([...ai]).toEqual(['a'])
    expect([...typingSeats({ a: 1000, b: 1000 }, 60_000, TYPING_TTL_MS, ai)]).toEqual(['a'])
    expect([...typingSeats({ a: 1000 }, 1000 + AI_THINKING_TTL_MS, TYPING_TTL_MS, ai)]).toEqual([])
  })

  it('never lets a late REST answer move a liquid back', () => {
    const analysed = makeLiquid({ id: 'l', analysis_source: 'model', pscale: -1 })
    expect(isNewerLiquid(analysed, makeLiquid({ id: 'l' }))).toBe(false)
    expect(isNewerLiquid(makeLiquid({ id: 'l' }), analysed)).toBe(true)
    expect(isNewerLiquid({ ...analysed, status: 'committed' }, { ...analysed, revision: 2 })).toBe(false)
    const s = fromSnapshot(makeFrameView({ liquid: [{ ...analysed, status: 'committed' }] }))
    expect(withLocalLiquid(s, makeLiquid({ id: 'l' })).liquid.l?.status).toBe('committed')
    const draft = fromSnapshot(makeFrameView({ liquid: [analysed] }))
    expect(withLocalLiquid(draft, { ...analysed, status: 'withdrawn' }).liquid.l).toBeUndefined()
  })
})

describe('faces', () => {
  it('offers the GM every face and a player theirs plus those the GM opened', () => {
    expect(facesFor({ is_gm: true, player_faces: [] }, false)).toEqual(['author', 'designer'])
    expect(facesFor({ is_gm: false, player_faces: [] }, true)).toEqual(['player'])
    expect(facesFor({ is_gm: false, player_faces: ['author'] }, true)).toEqual(['player', 'author'])
  })

  it('shows an author’s writing in the feed, never among intentions, through its pass’s life', () => {
    const written = makeLiquid({ id: 'w', face: 'author', status: 'submitted', submitted_at: '2025-01-01T00:00:09Z' })
    let state = fromSnapshot(makeFrameView({ seq: 1, liquid: [written, makeLiquid({ id: 'i' })] }))
    expect(pendingLiquid(state).map((l) => l.id)).toEqual(['i'])
    expect(feedEntries(state).map((e) => e.key)).toEqual(['w:w'])
    const committed = { ...written, status: 'committed' as const, committed_at: '2025-01-01T00:00:10Z', result: { pass: 'p' } }
    const failed = { ...committed, result: { pass: 'p', error: 'No.' } }
    const done = { ...committed, status: 'consumed' as const, result: { pass: 'p', kind: 'content' as const, id: 'c', name: 'Greyhaven' } }
    const states = [committed, failed, committed, done].map((liquid, i) => {
      const type = (['liquid.committed', 'liquid.failed', 'liquid.committed', 'liquid.consumed'] as const)[i]!
      state = play(state, [{ type, liquid, seq: 2 + i }])
      const entry = feedEntries(state)[0]!
      return entry.kind === 'writing' ? writingState(entry.liquid) : null
    })
    expect(states).toEqual(['working', 'failed', 'working', 'done'])
    expect(pendingLiquid(state).map((l) => l.id)).toEqual(['i'])
  })

  it('takes the faces the GM opens from frame.updated', () => {
    const state = play(fromSnapshot(makeFrameView({ seq: 1 })), [
      { type: 'frame.updated', frame: { name: 'x', tempo: 1, liquid_visibility: 'all', player_faces: ['designer'] }, seq: 2 },
    ])
    expect(state.info.player_faces).toEqual(['designer'])
  })
})

describe('flagLine', () => {
  it('says the kind, whose, the words, and when the second opinion found it', () => {
    const words = { kind: 'internal_truth', owner: 'Bob', excerpt: 'the ledger', source: 'words' }
    expect(flagLine(words)).toBe('internal truth of Bob “the ledger”')
    expect(flagLine({ ...words, source: 'second_opinion' })).toBe('internal truth of Bob “the ledger” (second opinion)')
  })
})
