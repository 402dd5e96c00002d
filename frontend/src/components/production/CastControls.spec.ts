import { mount } from '@vue/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import CastControls from '@/components/production/CastControls.vue'
import { PHONE_QUERY } from '@/composables/useMediaQuery'
import { makeCast } from '@/test/factories'

/** A screen that is a phone or not: only the phone query can match. */
function screen(phone: boolean) {
  vi.stubGlobal('matchMedia', (query: string) => ({
    matches: phone && query === PHONE_QUERY,
    addEventListener: () => {},
    removeEventListener: () => {},
  }))
}

const props = { cast: [makeCast('as1', 'Alice'), makeCast('as2', 'Bob')], busy: false, sending: null, autoplayRemaining: 0 }

afterEach(() => vi.unstubAllGlobals())

describe('CastControls', () => {
  it('shows small avatars under headings for screen readers only on a phone, full ones elsewhere', () => {
    screen(true)
    const phone = mount(CastControls, { props })
    expect(phone.findAll('.avatar').map((a) => a.attributes('style'))).toEqual([
      expect.stringContaining('width: 24px'),
      expect.stringContaining('width: 24px'),
    ])
    expect(phone.find('#cast-title').classes()).toContain('sr-only')
    screen(false)
    const desktop = mount(CastControls, { props })
    expect(desktop.find('.avatar').attributes('style')).toContain('width: 34px')
    expect(desktop.find('#cast-title').classes()).not.toContain('sr-only')
  })

  it('plays the chosen cast member, or lets the server pick', async () => {
    screen(true)
    const wrapper = mount(CastControls, { props })
    await wrapper.findAll('[data-testid=cast-play]')[1]!.trigger('click')
    await wrapper.find('[data-testid=turn-next]').trigger('click')
    expect(wrapper.emitted('play')).toEqual([['as2']])
    expect(wrapper.emitted('next')).toHaveLength(1)
  })
})
