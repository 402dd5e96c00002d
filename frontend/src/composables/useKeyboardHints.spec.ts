import { mount } from '@vue/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { effectScope } from 'vue'
import TurnComposer from '@/components/production/TurnComposer.vue'
import { makeCast } from '@/test/factories'
import { KEYBOARD_QUERY, useKeyboardHints } from './useKeyboardHints'

/** A matchMedia whose one query matches `matches` until `change(…)` flips it. */
function fakeMedia(matches: boolean) {
  const listeners = new Set<() => void>()
  const list = {
    matches,
    addEventListener: (_: string, f: () => void) => listeners.add(f),
    removeEventListener: (_: string, f: () => void) => listeners.delete(f),
  }
  const matchMedia = vi.fn((query: string) => {
    expect(query).toBe(KEYBOARD_QUERY)
    return list
  })
  vi.stubGlobal('matchMedia', matchMedia)
  return {
    listeners,
    change(to: boolean) {
      list.matches = to
      listeners.forEach((f) => f())
    },
  }
}

afterEach(() => vi.unstubAllGlobals())

describe('useKeyboardHints', () => {
  it('follows the screen, and stops listening with its scope', () => {
    const media = fakeMedia(false)
    const scope = effectScope()
    const hints = scope.run(() => useKeyboardHints())!
    expect(hints.value).toBe(false)
    media.change(true)
    expect(hints.value).toBe(true)
    scope.stop()
    expect(media.listeners.size).toBe(0)
  })

  it('keeps the shortcut out of a phone’s placeholder and in a desktop’s', () => {
    fakeMedia(false)
    const props = { cast: [makeCast('as1', 'Alice')], sending: false, draft: null, autoReply: false }
    const phone = mount(TurnComposer, { props })
    expect(phone.find('textarea').attributes('placeholder')).toBe('Direct the scene: “A phone rings in the next room…”')
    fakeMedia(true)
    const desktop = mount(TurnComposer, { props })
    expect(desktop.find('textarea').attributes('placeholder')).toContain('(Ctrl+Enter to send)')
  })
})
