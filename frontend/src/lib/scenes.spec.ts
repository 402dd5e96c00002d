import { describe, expect, it } from 'vitest'
import { makeNarrative, makeOutcome, makeScene } from '@/test/factories'
import type { FeedEntry } from './frame'
import { closedBecause, sceneTitle, withScenes } from './scenes'

const outcome = (seq: number): FeedEntry => ({ kind: 'outcome', key: `o:${seq}`, at: '', outcome: makeOutcome({ id: `o${seq}`, seq }), number: seq })
const keys = (rows: { key: string }[]) => rows.map((r) => r.key)

describe('scenes in the feed', () => {
  it('titles a scene with its place, when it has one, and says why it ended', () => {
    expect(sceneTitle({ number: 2, title: 'The docks' })).toBe('Scene 2 — The docks')
    expect(sceneTitle({ number: 3, title: '' })).toBe('Scene 3')
    expect(closedBecause({ closed_reason: 'location' })).toBe('the place changed')
  })

  it('puts each divider before the first outcome of its scene, and a new empty scene last', () => {
    const narrative: FeedEntry = { kind: 'narrative', key: 'n:1', at: '', narrative: makeNarrative({ id: '1' }) }
    const feed = [outcome(1), narrative, outcome(4), outcome(7)]
    const scenes = [
      makeScene({ number: 2, opened_seq: 3, status: 'closed', closed_seq: 6 }),
      makeScene({ number: 1, status: 'closed', closed_seq: 3 }),
      makeScene({ number: 3, opened_seq: 6, status: 'closed', closed_seq: 8 }),
      makeScene({ number: 4, opened_seq: 8 }),
    ]
    const rows = withScenes(feed, scenes)
    expect(keys(rows)).toEqual(['o:1', 'n:1', 's:scene2', 'o:4', 's:scene3', 'o:7', 's:scene4'])
    const divider = rows[2]
    expect(divider?.kind === 'scene' && divider.previous?.number).toBe(1)
  })

  it('ends the feed with the last scene’s summaries once the frame closed it', () => {
    const rows = withScenes([outcome(1)], [makeScene({ number: 1, status: 'closed', closed_seq: 2 })])
    expect(keys(rows)).toEqual(['o:1', 's:end'])
    const end = rows[1]
    expect(end?.kind === 'scene' && end.scene === null && end.previous?.number).toBe(1)
  })

  it('adds nothing while the frame has one scene', () => {
    expect(keys(withScenes([outcome(1)], [makeScene({ number: 1 })]))).toEqual(['o:1'])
    expect(keys(withScenes([outcome(1)], []))).toEqual(['o:1'])
  })
})
