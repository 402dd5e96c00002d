/**
 * A player's frame tab while they look elsewhere: the title counts what happened since
 * (`(2) Night at the docks · LMiX`), and, when they turned alerts on, a short tone and a
 * browser notification say what it was (lib/alerts.ts decides what counts). The choice is
 * remembered in this browser.
 */
import { onScopeDispose, ref, watch, watchEffect } from 'vue'
import { alertText, alertsIn, frameTitle, unseen } from '@/lib/alerts'
import type { FrameState } from '@/lib/frame'

const STORAGE_KEY = 'lmix.frame-alerts'

export interface FrameAlertsSource {
  state: FrameState | null
  mySeatId: string | null
}

export function useFrameAlerts(source: FrameAlertsSource) {
  const enabled = ref(localStorage.getItem(STORAGE_KEY) === 'on')
  const unread = ref(0)
  const looking = ref(document.visibilityState === 'visible')
  const notifications = typeof Notification !== 'undefined'
  const seen = new Set<string>()
  let primed = false // the first state is what the reader found, not news

  watch(
    () => (source.state ? alertsIn(source.state, source.mySeatId) : null),
    (alerts) => {
      if (!alerts) return
      const fresh = unseen(alerts, seen)
      for (const a of fresh) seen.add(a.key)
      if (!primed || looking.value || !fresh.length) {
        primed = true
        return
      }
      unread.value += fresh.length
      const text = alertText(fresh, source.state?.info.name ?? 'LMiX')
      if (enabled.value && text) announce(text)
    },
    { immediate: true },
  )

  const onVisibility = () => {
    looking.value = document.visibilityState === 'visible'
    if (looking.value) unread.value = 0
  }
  document.addEventListener('visibilitychange', onVisibility)
  const stopTitle = watchEffect(() => {
    const name = source.state?.info.name
    if (name) document.title = frameTitle(name, unread.value)
  })
  onScopeDispose(() => {
    document.removeEventListener('visibilitychange', onVisibility)
    stopTitle()
  })

  /** Turn alerts on (asking for the browser's permission to notify) or off. */
  async function toggle() {
    const on = !enabled.value
    if (on && notifications && Notification.permission === 'default') {
      await Notification.requestPermission().catch(() => 'denied')
    }
    enabled.value = on
    localStorage.setItem(STORAGE_KEY, on ? 'on' : 'off')
  }

  function announce(text: string) {
    tone()
    if (notifications && Notification.permission === 'granted') {
      new Notification('LMiX', { body: text, tag: 'lmix-frame' })
    }
  }

  return { enabled, unread, toggle }
}

/** A short soft tone; silent where the browser allows no audio yet. */
function tone() {
  try {
    const context = new AudioContext()
    const oscillator = context.createOscillator()
    const gain = context.createGain()
    oscillator.frequency.value = 660
    gain.gain.setValueAtTime(0.08, context.currentTime)
    gain.gain.exponentialRampToValueAtTime(0.001, context.currentTime + 0.4)
    oscillator.connect(gain).connect(context.destination)
    oscillator.start()
    oscillator.stop(context.currentTime + 0.4)
    oscillator.onended = () => void context.close()
  } catch {
    // No AudioContext (or no user gesture yet): the title and notification still tell.
  }
}
