/**
 * Whether a CSS media query matches, following the screen as it changes; stops listening
 * with its scope. `fallback` is the answer where the browser cannot tell (no matchMedia).
 */
import { getCurrentScope, onScopeDispose, readonly, ref } from 'vue'

export function useMediaQuery(media: string, fallback: boolean) {
  if (typeof window.matchMedia !== 'function') return readonly(ref(fallback))
  const query = window.matchMedia(media)
  const matches = ref(query.matches)
  const onChange = () => (matches.value = query.matches)
  query.addEventListener?.('change', onChange)
  if (getCurrentScope()) onScopeDispose(() => query.removeEventListener?.('change', onChange))
  return readonly(matches)
}

/** Phone widths, as the stylesheets' `@media (max-width: 640px)`. */
export const PHONE_QUERY = '(max-width: 640px)'
