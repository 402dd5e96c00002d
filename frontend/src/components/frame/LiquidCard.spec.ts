import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import { makeLiquid } from '@/test/factories'
import { isolation, RTL } from '@/test/bidi'
import LiquidCard from './LiquidCard.vue'

const frame = { mode: 'per_character', tempo: 1, liquid_visibility: 'all' } as const

describe('LiquidCard', () => {
  it('shows an intention as story text: actions in italics, its line breaks, typed HTML as text', () => {
    const content = '*Alice steps back.* "Not tonight."\nThen I wait. <b>x</b>'
    const w = mount(LiquidCard, { props: { liquid: makeLiquid({ id: 'l1', content }), frame, nameOf: () => 'Alice', now: 0 } })
    const text = w.find('[data-testid="liquid-text"]')
    expect(text.find('em').text()).toBe('Alice steps back.')
    expect(text.find('.rp-speech').text()).toBe('"Not tonight."')
    expect(text.findAll('br')).toHaveLength(1)
    expect(text.find('b').exists()).toBe(false)
    expect(text.text()).toContain('Then I wait. <b>x</b>')
  })

  it('lays out the writer’s name, the intention and its reading in their own direction (RTL with quotes)', () => {
    const liquid = makeLiquid({ id: 'l1', content: RTL, refined: RTL, capable: false, capable_reason: RTL, analysis_source: 'model', interruptive: true, targets: ['seat-b'] })
    const w = mount(LiquidCard, { props: { liquid, frame, nameOf: () => RTL, now: 0 } })
    const found = isolation(w.element)
    expect(found.length).toBeGreaterThanOrEqual(5) // name, text, reason, reading, target
    expect(found.every(Boolean)).toBe(true)
  })

  it('shows the GM the guard’s flags on it, and nothing when there are none', () => {
    const flags = [{ kind: 'secret', owner: 'Bob', excerpt: 'names the real name' }]
    const flagged = mount(LiquidCard, { props: { liquid: makeLiquid({ id: 'l3' }), frame, nameOf: () => 'Tony', now: 0, flags } })
    expect(flagged.find('[data-testid="liquid-flag"]').text()).toContain('secret')
    expect(flagged.find('[data-testid="liquid-flag"]').attributes('title')).toBe('secret of Bob “names the real name”')
    const plain = mount(LiquidCard, { props: { liquid: makeLiquid({ id: 'l4' }), frame, nameOf: () => 'Tony', now: 0 } })
    expect(plain.find('[data-testid="liquid-flag"]').exists()).toBe(false)
  })

  it('reads another’s intention without the soft pass’s words, which only its player and the GM receive', () => {
    // What another player's socket brings in a frame that shows liquid to all: the words, not the reading of them.
    const { refined: _r, capable_reason: _c, analysis_note: _n, ...others } = makeLiquid({ id: 'l5', seat: 'seat-b', pscale: 0, capable: false, analysis_source: 'heuristic' })
    const w = mount(LiquidCard, { props: { liquid: others, frame, nameOf: () => 'Bob', now: 0 } })
    expect(w.find('[data-testid="liquid-text"]').text()).toBe('I open the door.')
    expect(w.find('[data-testid="verdict-capable"]').text()).toBe('not capable')
    expect(w.find('[data-testid="verdict-reason"]').exists()).toBe(false)
    expect(w.find('[data-testid="verdict-refined"]').exists()).toBe(false)
    expect(w.find('[title="The model did not answer; simple rules decided"]').text()).toBe('rough guess')
    expect(w.text()).not.toContain('undefined')
    // Still being read: whose it is decides the words.
    const pending = makeLiquid({ id: 'l6', seat: 'seat-b' })
    expect(mount(LiquidCard, { props: { liquid: pending, frame, nameOf: () => 'Bob', now: 0 } }).text()).toContain('Reading the intention…')
    expect(mount(LiquidCard, { props: { liquid: pending, frame, nameOf: () => 'Bob', now: 0, mine: true } }).text()).toContain('Reading your intention…')
  })

  it('shows the soft pass’s reading of it the same way', () => {
    const liquid = makeLiquid({ id: 'l2', pscale: -1, analysis_source: 'model', refined: '*Alice steps back.* <i>x</i>' })
    const w = mount(LiquidCard, { props: { liquid, frame, nameOf: () => 'Alice', now: 0 } })
    const refined = w.find('[data-testid="verdict-refined"]')
    expect(refined.find('em').text()).toBe('Alice steps back.')
    expect(refined.find('i').exists()).toBe(false)
    expect(refined.text()).toBe('Read as: Alice steps back. <i>x</i>')
  })
})
