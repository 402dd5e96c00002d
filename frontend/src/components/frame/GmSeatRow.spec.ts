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
})
