import { flushPromises, mount } from '@vue/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import { makeSeat, SEATS } from '@/test/factories'
import GmSeatRow from './GmSeatRow.vue'

const q = (id: string) => `[data-testid="${id}"]`
const alice = makeSeat({ id: SEATS.alice, name: 'Alice', user: 7, player: 'ada' })

afterEach(() => {
  document.body.innerHTML = ''
})

describe('GmSeatRow', () => {
  it('offers a closed scene’s seats for reading only', () => {
    const props = { assistants: [], typing: false, online: false, failed: false, now: 0, busy: false, closed: true }
    const human = mount(GmSeatRow, { props: { ...props, seat: alice } })
    expect(human.find(q('gm-seat-sheet')).exists()).toBe(true)
    expect(human.find(q('gm-seat-kick')).exists()).toBe(false)
    const ai = mount(GmSeatRow, { props: { ...props, seat: makeSeat({ id: SEATS.bob, name: 'Tony', controller: 'ai', user: null, player: null, assistant: 'a1' }) } })
    expect(ai.find(q('gm-seat-open')).exists()).toBe(false)
    expect(ai.find(q('gm-seat-reacts')).attributes('disabled')).toBeDefined()
  })

  it('asks before kicking, saying the player cannot rejoin until allowed back, then opens the seat', async () => {
    const w = mount(GmSeatRow, {
      props: { seat: alice, assistants: [], typing: false, online: false, failed: false, now: 0, busy: false },
      attachTo: document.body,
    })
    await w.find(q('gm-seat-kick')).trigger('click')
    await flushPromises()
    expect(document.body.textContent).toContain('They cannot take a seat in this frame again until you allow them back')
    expect(w.emitted('update')).toBeUndefined()
    document.querySelector<HTMLButtonElement>(q('confirm-ok'))!.click()
    await flushPromises()
    expect(w.emitted('update')).toEqual([[{ controller: 'open' }]])
    w.unmount()
  })
  it("shows a covert character's real name beside its public one, and nothing more for the others", () => {
    const bob = makeSeat({ id: SEATS.bob, name: 'Bob Wilson', user: 8, player: 'ben' })
    const props = { assistants: [], typing: false, online: true, failed: false, now: 0, busy: false }
    const covert = mount(GmSeatRow, { props: { ...props, seat: bob, realName: 'Detective Johnson' } })
    expect(covert.find('.name').text()).toBe('Bob Wilson · really Detective Johnson')
    expect(covert.find(q('gm-seat-real-name')).exists()).toBe(true)
    expect(covert.find(q('seat-online')).attributes('data-online')).toBe('true')
    const plain = mount(GmSeatRow, { props: { ...props, seat: alice } })
    expect(plain.find('.name').text()).toBe('Alice')
    expect(plain.find(q('gm-seat-real-name')).exists()).toBe(false)
  })

  const tony = makeSeat({ id: SEATS.tony, name: 'Tony', controller: 'ai', user: null, assistant: 'as-t' })
  const props = { assistants: [], online: true, failed: false, now: 0, busy: false }

  it('lets the GM say when an AI seat acts on its own, and sends only a change', async () => {
    const w = mount(GmSeatRow, { props: { ...props, seat: tony, typing: false } })
    const select = w.find<HTMLSelectElement>(q('gm-seat-reacts'))
    expect(select.element.value).toBe('addressed')
    expect(select.findAll('option').map((o) => o.text())).toEqual(['always', 'when addressed', 'only when I say'])
    await select.setValue('gm')
    const sent = () => (w.emitted('update') ?? []).map(([input]) => input)
    expect(sent()).toEqual([{ ai_reacts: 'gm' }])
    await w.setProps({ seat: { ...tony, ai_reacts: 'gm' } })
    expect(select.element.value).toBe('gm')
    await select.setValue('gm') // what it already does: nothing to send
    await select.setValue('always')
    expect(sent()).toEqual([{ ai_reacts: 'gm' }, { ai_reacts: 'always' }])
  })

  it('puts the select back to what the seat does when the server refuses the change', async () => {
    const w = mount(GmSeatRow, { props: { ...props, seat: tony, typing: false } })
    const select = w.find<HTMLSelectElement>(q('gm-seat-reacts'))
    await select.setValue('always')
    const [input, done] = w.emitted('update')![0] as [unknown, (saved: boolean) => void]
    expect(input).toEqual({ ai_reacts: 'always' })
    expect(select.element.value).toBe('always') // while the request runs
    done(false)
    expect(select.element.value).toBe('addressed')
    await select.setValue('gm')
    ;(w.emitted('update')![1] as [unknown, (saved: boolean) => void])[1](true)
    expect(select.element.value).toBe('gm') // saved: the socket's seat will say so too
  })

  it('opens the seat’s character sheet from its row, whoever plays it', async () => {
    for (const seat of [tony, alice, makeSeat({ id: SEATS.bob, name: 'Bob', controller: 'open', user: null })]) {
      const w = mount(GmSeatRow, { props: { ...props, seat, typing: false } })
      await w.find(q('gm-seat-sheet')).trigger('click')
      expect(w.emitted('sheet')).toHaveLength(1)
    }
  })

  it('offers no reacting choice for a seat a person plays or nobody does', () => {
    expect(mount(GmSeatRow, { props: { ...props, seat: alice, typing: false } }).find(q('gm-seat-reacts')).exists()).toBe(false)
  })

  it('shows an AI seat thinking and a player typing', () => {
    expect(mount(GmSeatRow, { props: { ...props, seat: tony, typing: true } }).find(q('gm-seat-typing')).text()).toBe('thinking…')
    expect(mount(GmSeatRow, { props: { ...props, seat: alice, typing: true } }).find(q('gm-seat-typing')).text()).toBe('typing…')
  })
})
