import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it } from 'vitest'
import InviteLink from './InviteLink.vue'

const q = (id: string) => `[data-testid="${id}"]`

describe('InviteLink', () => {
  beforeEach(() => setActivePinia(createPinia()))

  it('asks before making a new link, and makes none when the GM cancels', async () => {
    const w = mount(InviteLink, { props: { code: 'abc', canRotate: true }, attachTo: document.body })
    await w.find(q('invite-rotate')).trigger('click')
    expect(w.emitted('rotate')).toBeUndefined()
    const dialog = () => document.body.querySelector(q('confirm-dialog'))
    expect(dialog()?.textContent).toContain('stops working')
    ;(document.body.querySelector(q('confirm-cancel')) as HTMLButtonElement).click()
    await flushPromises()
    expect(w.emitted('rotate')).toBeUndefined()
    expect(dialog()).toBeNull()

    await w.find(q('invite-rotate')).trigger('click')
    ;(document.body.querySelector(q('confirm-ok')) as HTMLButtonElement).click()
    await flushPromises()
    expect(w.emitted('rotate')).toHaveLength(1)
    w.unmount()
  })

  it('offers no new link where rotating is not offered (the spectator link)', () => {
    const w = mount(InviteLink, { props: { code: 'abc', href: 'http://test/watch/abc', label: 'Spectator link' } })
    expect(w.find(q('invite-rotate')).exists()).toBe(false)
    expect((w.find(q('invite-input')).element as HTMLInputElement).value).toBe('http://test/watch/abc')
  })
})
