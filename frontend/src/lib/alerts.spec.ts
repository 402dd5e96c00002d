import { describe, expect, it } from 'vitest'
import { fromSnapshot } from './frame'
import { alertText, alertsIn, frameTitle, unseen, waitingFor } from './alerts'
import { SEATS, makeFrameView, makeLiquid, makeNarrative, makeOutcome, makeWindow } from '@/test/factories'

const state = (over: Parameters<typeof makeFrameView>[0] = {}) => fromSnapshot(makeFrameView(over))

describe('alertsIn', () => {
  it('counts outcomes, my finished or shared stories and my open window, nobody else’s', () => {
    const s = state({
      outcomes: [makeOutcome({ id: 'o1', seq: 1 })],
      narratives: [
        makeNarrative({ id: 'mine', seat: SEATS.alice, status: 'done' }),
        makeNarrative({ id: 'streaming', seat: SEATS.alice, status: 'streaming' }),
        makeNarrative({ id: 'bobs', seat: SEATS.bob, status: 'done' }),
        makeNarrative({ id: 'shared', seat: SEATS.bob, status: 'done', shared: true }),
      ],
      windows: [makeWindow({ id: 'w-alice', seat: SEATS.alice }), makeWindow({ id: 'w-bob', seat: SEATS.bob })],
    })
    expect(alertsIn(s, SEATS.alice).map((a) => a.key).sort()).toEqual(
      ['outcome:o1', 'story:mine', 'story:shared', 'window:w-alice'].sort(),
    )
  })

  it('leaves out what was seen', () => {
    const s = state({ outcomes: [makeOutcome({ id: 'o1', seq: 1 }), makeOutcome({ id: 'o2', seq: 2 })] })
    expect(unseen(alertsIn(s, SEATS.alice), new Set(['outcome:o1'])).map((a) => a.key)).toEqual(['outcome:o2'])
    // A held outcome's release is news again: its text arrives only then.
    const held = state({ outcomes: [makeOutcome({ id: 'o3', seq: 3, held: true })] })
    expect(alertsIn(held, SEATS.alice).map((a) => a.key)).toEqual(['held:o3'])
    expect(unseen(alertsIn(s, SEATS.alice), new Set(['held:o2'])).map((a) => a.key)).toEqual(['outcome:o1', 'outcome:o2'])
  })
})

describe('the title and the notification', () => {
  it('puts the unseen count before the frame’s name', () => {
    expect(frameTitle('Docks', 0)).toBe('Docks · LMiX')
    expect(frameTitle('Docks', 3)).toBe('(3) Docks · LMiX')
  })

  it('names the most pressing news', () => {
    expect(alertText([{ key: 'a', kind: 'outcome' }, { key: 'b', kind: 'window' }], 'Docks')).toMatch(/window is open/)
    expect(alertText([{ key: 'a', kind: 'outcome' }, { key: 'b', kind: 'story' }], 'Docks')).toMatch(/story continues/)
    expect(alertText([], 'Docks')).toBeNull()
  })
})

describe('waitingFor', () => {
  it('is empty until a window opens', () => {
    expect(waitingFor(state())).toEqual([])
  })

  it('lists the players who have not committed once a round is under way, never AI seats', () => {
    const s = state({ windows: [makeWindow({ id: 'w', seat: SEATS.alice })] })
    expect(waitingFor(s).map((seat) => seat.id)).toEqual([SEATS.bob])
  })

  it('counts a committed intention as ready, a submitted one not', () => {
    const committed = state({
      windows: [makeWindow({ id: 'w', seat: SEATS.alice })],
      liquid: [makeLiquid({ id: 'l', seat: SEATS.bob, status: 'committed' })],
    })
    const submitted = state({
      windows: [makeWindow({ id: 'w', seat: SEATS.alice })],
      liquid: [makeLiquid({ id: 'l', seat: SEATS.bob, status: 'submitted' })],
    })
    expect(waitingFor(committed)).toEqual([])
    expect(waitingFor(submitted).map((seat) => seat.id)).toEqual([SEATS.bob])
  })

  it('waits for no one in a paused frame', () => {
    expect(waitingFor(state({ status: 'paused', windows: [makeWindow({ id: 'w', seat: SEATS.alice })] }))).toEqual([])
  })
})
