/** The current time as a ref that ticks (countdowns, "typing…" expiry); stops with its scope. */
import { getCurrentScope, onScopeDispose, readonly, ref } from 'vue'

export function useNow(intervalMs = 250) {
  const now = ref(Date.now())
  const timer = setInterval(() => (now.value = Date.now()), intervalMs)
  if (getCurrentScope()) onScopeDispose(() => clearInterval(timer))
  return readonly(now)
}
