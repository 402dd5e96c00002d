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
})
