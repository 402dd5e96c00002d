import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import type { FeedEntry } from '@/lib/frame'
import { makeLiquid, makeNarrative, makeOutcome, makeSeat, SEATS } from '@/test/factories'
import { isolation, RTL } from '@/test/bidi'
import FeedItem from './FeedItem.vue'

const q = (id: string) => `[data-testid="${id}"]`
const names: Record<string, string> = { [SEATS.alice]: 'Alice', [SEATS.bob]: 'Bob' }
const nameOf = (seat: string) => names[seat] ?? 'Someone'

function mountEntry(entry: FeedEntry, gm = false) {
  return mount(FeedItem, { props: { entry, nameOf, mySeats: gm ? [] : [SEATS.alice], gm } })
}
const outcomeEntry = (o: ReturnType<typeof makeOutcome>, number = 1): FeedEntry => ({ kind: 'outcome', key: `o:${o.id}`, at: o.created_at, outcome: o, number })
const narrativeEntry = (n: ReturnType<typeof makeNarrative>): FeedEntry => ({ kind: 'narrative', key: `n:${n.id}`, at: n.created_at, narrative: n })

describe('FeedItem', () => {
  const outcome = makeOutcome({
    id: 'o1',
    seq: 4,
    actions_resolved: [
      { seat: SEATS.bob, action: 'shoves Alice', result: 'success' },
      { seat: SEATS.alice, action: 'tries to hold the rail', result: 'partial' },
    ],
    world_facts: ['The rail is broken.'],
    interrupts: [{ seat: SEATS.alice, reason: 'You are falling.' }],
    flags: [{ kind: 'secret', owner: 'Bob', excerpt: 'Repeats Bob’s internal truth.' }],
  })

  it('sets the GM’s narration and notes apart from what characters did and wrote', () => {
    const narration = mountEntry(outcomeEntry(makeOutcome({ id: 'g', seq: 5, seat: null, actions_resolved: [], world_facts: ['A bell tolls.'] })))
    expect(narration.find(q('outcome-gm')).text()).toBe('The GM narrates')
    expect(narration.find(q('outcome-fact')).text()).toBe('A bell tolls.')
    const note = makeNarrative({ id: 'n', seat: SEATS.alice, trigger: 'gm', status: 'done', text: 'You know him.' })
    expect(mountEntry(narrativeEntry(note)).find(q('narrative-label')).text()).toBe('A note from the GM — only you read this')
    expect(mountEntry(narrativeEntry(note), true).find(q('narrative-label')).text()).toBe('Your note to Alice')
  })

  it('shows who did what with result chips, the world facts and who is interrupted', () => {
    const w = mountEntry(outcomeEntry(outcome))
    expect(w.findAll(q('outcome-action-text')).map((a) => a.text())).toEqual(['Bob shoves Alice', 'Alice tries to hold the rail'])
    expect(w.findAll(q('result-chip')).map((c) => c.text())).toEqual(['success', 'partial'])
    expect(w.findAll(q('result-chip')).map((c) => c.classes())).toEqual([expect.arrayContaining(['badge-success']), expect.arrayContaining(['badge-warning'])])
    expect(w.find(q('outcome-fact')).text()).toBe('The rail is broken.')
    expect(w.find(q('outcome-interrupt')).text()).toContain('You are interrupted: You are falling.')
  })

  it('lays out every name and text written by players or the model in its own direction (RTL with quotes)', () => {
    const rtlNames = (seat: string) => `${RTL}-${seat}`
    const o = makeOutcome({
      id: 'o1',
      seq: 4,
      actions_resolved: [{ seat: SEATS.bob, action: RTL, result: 'success' }],
      world_facts: [RTL],
      interrupts: [{ seat: SEATS.bob, reason: RTL }],
      flags: [{ kind: 'secret', owner: 'Bob', excerpt: RTL }],
    })
    const bones = mount(FeedItem, { props: { entry: outcomeEntry(o), nameOf: rtlNames, mySeats: [], gm: true } })
    const outcomeIsolation = isolation(bones.element)
    expect(outcomeIsolation.length).toBeGreaterThanOrEqual(6)
    expect(outcomeIsolation.every(Boolean)).toBe(true)

    const n = makeNarrative({ id: 'n1', seat: SEATS.bob, text: `${RTL}\n\n${RTL}`, status: 'done' })
    for (const gm of [true, false]) {
      const flesh = mount(FeedItem, { props: { entry: narrativeEntry(n), nameOf: rtlNames, mySeats: [], gm } })
      const fleshIsolation = isolation(flesh.element)
      expect(fleshIsolation.length).toBeGreaterThanOrEqual(3) // the label's name and two paragraphs
      expect(fleshIsolation.every(Boolean)).toBe(true)
    }
  })

  it("numbers an outcome by its place in the frame, not by its event seq", () => {
    const w = mountEntry(outcomeEntry(makeOutcome({ id: 'o9', seq: 42 }), 3))
    expect(w.find(q('outcome-number')).text()).toMatch(/^#3\b/)
    expect(w.text()).not.toContain('#42')
    expect(w.find(q('feed-outcome')).attributes('data-seq')).toBe('42')
  })

  it('renders actions and facts as story lines: actions in italics, speech marked, typed HTML as text', () => {
    const o = makeOutcome({
      id: 'o2',
      seq: 5,
      actions_resolved: [{ seat: SEATS.alice, action: '*steps back.* "Not tonight." <b>x</b>', result: 'success' }],
      world_facts: ['The *door* is shut. <img src=x onerror=alert(1)>'],
    })
    const w = mountEntry(outcomeEntry(o))
    const action = w.find(q('outcome-action-text'))
    expect(action.find('em').text()).toBe('steps back.')
    expect(action.find('.rp-speech').text()).toBe('"Not tonight."')
    expect(action.find('b').exists()).toBe(false)
    expect(action.text()).toBe('Alice steps back. "Not tonight." <b>x</b>')
    const fact = w.find(q('outcome-fact'))
    expect(fact.find('em').text()).toBe('door')
    expect(fact.find('img').exists()).toBe(false)
    expect(fact.find('p').exists()).toBe(false)
  })

  it('shows the guard’s flags to the GM only', () => {
    expect(mountEntry(outcomeEntry(outcome)).find(q('outcome-flag')).exists()).toBe(false)
    const gm = mountEntry(outcomeEntry(outcome), true)
    expect(gm.find(q('outcome-flag')).text()).toContain('secret')
    expect(gm.find(q('outcome-flags')).text()).toContain('Repeats Bob’s internal truth.')
  })

  it('marks a narrative as the player’s own, the GM’s copy as private to its player, and shared prose as everyone’s', () => {
    const n = makeNarrative({ id: 'n1', text: 'You fall.', status: 'streaming' })
    const mine = mountEntry(narrativeEntry(n))
    expect(mine.find(q('narrative-label')).text()).toContain('Your story — only you read this')
    expect(mine.find(q('narrative-text')).text()).toBe('You fall.')
    expect(mine.attributes('aria-busy')).toBe('true')
    expect(mountEntry(narrativeEntry(n), true).find(q('narrative-label')).text()).toContain('Private to Alice')
    const shared = mountEntry(narrativeEntry({ ...n, seat: SEATS.bob, shared: true }))
    expect(shared.find(q('narrative-label')).text()).toContain('shared with everyone')
  })

  it('renders a narrative’s Markdown as the chat does: actions in italics, speech marked, typed HTML as text', () => {
    const text = '*Alice steps back.* "Not tonight," she says. <img src=x onerror=alert(1)>'
    const w = mountEntry(narrativeEntry(makeNarrative({ id: 'n2', text, status: 'done' })))
    const prose = w.find(q('narrative-text'))
    expect(prose.find('em').text()).toBe('Alice steps back.')
    expect(prose.find('.rp-speech').text()).toBe('"Not tonight,"')
    expect(prose.find('img').exists()).toBe(false)
    expect(prose.text()).toContain('<img src=x onerror=alert(1)>')
    expect(prose.find('.caret').exists()).toBe(false)
  })

  it('marks a narrative written while someone else played the seat as theirs', () => {
    const seats = [makeSeat({ id: SEATS.alice, name: 'Alice', user: 9, player: 'new' })]
    const narrators = { '7': 'ada', '9': 'new' }
    const mountNarrative = (user: number | null) =>
      mount(FeedItem, {
        props: { entry: narrativeEntry(makeNarrative({ id: `n${user}`, seat: SEATS.alice, user })), nameOf, mySeats: [SEATS.alice], seats, narrators },
      })
    expect(mountNarrative(7).find(q('narrative-earlier-player')).text()).toBe('played by ada')
    expect(mountNarrative(9).find(q('narrative-earlier-player')).exists()).toBe(false) // the reader's own
    expect(mountNarrative(null).find(q('narrative-earlier-player')).exists()).toBe(false)
  })

  describe('an author’s or designer’s writing', () => {
    const writingEntry = (l: ReturnType<typeof makeLiquid>): FeedEntry => ({ kind: 'writing', key: `w:${l.id}`, at: l.submitted_at, liquid: l })
    const harbour = (over: Partial<ReturnType<typeof makeLiquid>> = {}) =>
      makeLiquid({ id: 'w1', face: 'author', status: 'committed', content: 'A harbour called Greyhaven.', result: { pass: 'p1' }, ...over })

    it('shows it as writing, not an intention, with its pass at work', () => {
      const w = mountEntry(writingEntry(harbour()))
      expect(w.find(q('feed-writing')).attributes('data-state')).toBe('working')
      expect(w.find(q('writing-label')).text()).toBe('You write as author')
      expect(w.find(q('writing-text')).text()).toBe('A harbour called Greyhaven.')
      expect(w.find(q('writing-working')).text()).toBe('Adding to the world…')
      const bobs = mountEntry(writingEntry(harbour({ seat: SEATS.bob, face: 'designer' })))
      expect(bobs.find(q('writing-label')).text()).toBe('Bob writes as designer')
      expect(bobs.find(q('writing-working')).text()).toBe('Writing the skill…')
      expect(mountEntry(writingEntry(harbour({ seat: null }))).find(q('writing-label')).text()).toBe('The GM writes as author')
    })

    it('says what it made', () => {
      const done = harbour({ status: 'consumed', result: { pass: 'p1', kind: 'content', id: 'c1', name: 'Greyhaven', edited: false } })
      expect(mountEntry(writingEntry(done)).find(q('writing-result')).text()).toBe('Added to the world: Greyhaven')
      const refined = harbour({ status: 'consumed', result: { pass: 'p1', kind: 'content', id: 'c1', name: 'Greyhaven', edited: true } })
      expect(mountEntry(writingEntry(refined)).find(q('writing-result')).text()).toBe('Refined in the world: Greyhaven')
      const skill = harbour({ face: 'designer', status: 'consumed', result: { pass: 'p1', kind: 'skill', id: 's1', name: 'Wry tone', replaced: true } })
      expect(mountEntry(writingEntry(skill)).find(q('writing-result')).text()).toBe('Skill replaced: Wry tone')
    })

    it('says why it failed, and gives the GM alone a retry', async () => {
      const failed = harbour({ result: { pass: 'p1', error: 'A guard category: choose another.' } })
      const player = mountEntry(writingEntry(failed))
      expect(player.find(q('writing-failed')).text()).toContain('A guard category: choose another.')
      expect(player.find(q('writing-retry')).exists()).toBe(false)
      const gm = mountEntry(writingEntry(failed), true)
      await gm.find(q('writing-retry')).trigger('click')
      expect(gm.emitted('retry')).toEqual([['p1']])
    })
  })
})
