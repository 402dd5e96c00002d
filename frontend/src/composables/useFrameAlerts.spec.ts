import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { effectScope, nextTick, reactive } from 'vue'
import { useFrameAlerts, type FrameAlertsSource } from './useFrameAlerts'
import { fromSnapshot } from '@/lib/frame'
import { SEATS, makeFrameView, makeNarrative, makeOutcome } from '@/test/factories'

let visibility: DocumentVisibilityState = 'visible'
const shown: string[] = []

class FakeNotification {
  static permission: NotificationPermission = 'default'
  static requestPermission = vi.fn(async () => {
    FakeNotification.permission = 'granted'
    return 'granted' as NotificationPermission
  })
  constructor(_title: string, options: NotificationOptions) {
    shown.push(String(options.body))
  }
}

function setVisibility(state: DocumentVisibilityState) {
  visibility = state
  document.dispatchEvent(new Event('visibilitychange'))
}

function mount(source: FrameAlertsSource) {
  const scope = effectScope()
  const alerts = scope.run(() => useFrameAlerts(source))!
  return { alerts, stop: () => scope.stop() }
}

const view = (outcomes = 1, stories: string[] = []) =>
  fromSnapshot(
    makeFrameView({
      name: 'Docks',
      outcomes: Array.from({ length: outcomes }, (_, i) => makeOutcome({ id: `o${i}`, seq: i + 1 })),
      narratives: stories.map((id) => makeNarrative({ id, seat: SEATS.alice, status: 'done' })),
    }),
  )

beforeEach(() => {
  visibility = 'visible'
  shown.length = 0
  FakeNotification.permission = 'default'
  localStorage.clear()
  vi.stubGlobal('Notification', FakeNotification)
  Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => visibility })
})
afterEach(() => vi.unstubAllGlobals())

describe('useFrameAlerts', () => {
  it('counts in the title only what happened while the tab was hidden, and clears on return', async () => {
    const source = reactive<FrameAlertsSource>({ state: view(2), mySeatId: SEATS.alice })
    const { alerts, stop } = mount(source)
    await nextTick()
    expect(document.title).toBe('Docks · LMiX') // what the reader found is not news
    source.state = view(3)
    await nextTick()
    expect(alerts.unread.value).toBe(0) // they were looking
    setVisibility('hidden')
    source.state = view(4, ['n1'])
    await nextTick()
    expect(document.title).toBe('(2) Docks · LMiX')
    setVisibility('visible')
    await nextTick()
    expect(document.title).toBe('Docks · LMiX')
    stop()
  })

  it('notifies only once turned on, with the browser’s permission, and remembers the choice', async () => {
    const source = reactive<FrameAlertsSource>({ state: view(1), mySeatId: SEATS.alice })
    const { alerts, stop } = mount(source)
    setVisibility('hidden')
    source.state = view(2)
    await nextTick()
    expect(shown).toEqual([]) // off by default
    await alerts.toggle()
    expect(FakeNotification.requestPermission).toHaveBeenCalled()
    source.state = view(2, ['n1'])
    await nextTick()
    expect(shown).toEqual(['Docks: your story continues.'])
    expect(localStorage.getItem('lmix.frame-alerts')).toBe('on')
    stop()
    expect(mount(reactive({ state: view(1), mySeatId: SEATS.alice })).alerts.enabled.value).toBe(true)
  })
})
