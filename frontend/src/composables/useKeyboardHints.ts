/**
 * Whether to hint keyboard shortcuts ("Ctrl+Enter to send"): on a wide screen with a
 * precise pointer, where a keyboard is likely. On a phone the hint is noise that pushes a
 * placeholder past its box. Follows the screen as it changes; stops with its scope.
 */
import { getCurrentScope, onScopeDispose, readonly, ref } from 'vue'

export const KEYBOARD_QUERY = '(min-width: 640px) and (hover: hover) and (pointer: fine)'

export function useKeyboardHints() {
  if (typeof window.matchMedia !== 'function') return readonly(ref(true))
  const query = window.matchMedia(KEYBOARD_QUERY)
  const hints = ref(query.matches)
  const onChange = () => (hints.value = query.matches)
  query.addEventListener?.('change', onChange)
  if (getCurrentScope()) onScopeDispose(() => query.removeEventListener?.('change', onChange))
  return readonly(hints)
}
