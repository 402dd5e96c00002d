/**
 * The frames' realtime contract, end to end: a real frame run (tests/synthesis/test_frame_sync.py
 * records its readers' snapshots and socket events in fixtures/frame-sync.json) replayed
 * through the store's own `applyEvent`. Any snapshot a reader took, plus the events after
 * it, equals the last snapshot REST gave — for the GM and for the players, whose views hide
 * the other's liquid.
 */
import { describe, expect, it } from 'vitest'
import type { FrameMessage, FrameView } from '@/api/types'
import recorded from './fixtures/frame-sync.json'
import { applyEvent, fromSnapshot, type FrameState } from './frame'

type Reader = { snapshots: FrameView[]; events: FrameMessage[] }
const readers = recorded as unknown as Record<string, Reader>
const NOW = Date.parse('2100-01-01T00:00:00Z') // countdowns play no part here

/** What the events carry; the rest of a snapshot (its info) they do not change. The GM's
 *  snapshot lists each outcome's flags, [] for none; `outcome.created` leaves them out
 *  (`outcome.flagged` follows when there are some). */
const view = (s: FrameState) => ({
  status: s.info.status,
  seats: s.seats,
  liquid: s.liquid,
  outcomes: s.info.is_gm ? s.outcomes.map((o) => ({ ...o, flags: o.flags ?? [] })) : s.outcomes,
  windows: s.windows,
  narratives: s.narratives,
  talk: s.talk,
})

/** `announced`: the windows known so far, when every window must be told of as it starts
 *  (a reader in sync from the first snapshot, before any existed). */
function replay(taken: FrameView, events: FrameMessage[], announced?: Set<string>): FrameState {
  let state = fromSnapshot(taken)
  for (const event of events) {
    const seq = 'seq' in event ? event.seq : undefined // the GM's unnumbered edits have none
    if (seq !== undefined) {
      if (seq <= state.seq) continue // the snapshot already holds it
      expect(seq, `a gap before ${event.type}`).toBe(state.seq + 1)
    }
    if (announced && 'window' in event) {
      const starts = event.type === 'window.opened' || event.type === 'window.fired'
      if (!starts) expect(announced, `${event.type} of a window never announced`).toContain(event.window.id)
      announced.add(event.window.id)
    }
    const applied = applyEvent(state, event, NOW)
    expect(applied.resync, `${event.type} asked for a re-read`).toBe(false)
    state = applied.state
  }
  return state
}

describe('a recorded frame run, replayed through the store', () => {
  it('has a GM and two players', () => {
    expect(Object.keys(readers).sort()).toEqual(['alice', 'bob', 'gm'])
  })

  for (const [name, { snapshots, events }] of Object.entries(readers)) {
    it(`${name}: every snapshot plus the events after it equals the last snapshot`, () => {
      const expected = view(fromSnapshot(snapshots[snapshots.length - 1]!))
      expect(Object.keys(expected.windows).length && Object.keys(expected.liquid).length && expected.outcomes.length).toBeTruthy()
      for (const [i, taken] of snapshots.slice(0, -1).entries()) {
        const state = replay(taken, events, i === 0 ? new Set(Object.keys(fromSnapshot(taken).windows)) : undefined)
        expect(view(state), `from seq ${taken.seq}`).toEqual(expected)
        expect(state.failedPasses).toEqual({})
      }
    })
  }
})
