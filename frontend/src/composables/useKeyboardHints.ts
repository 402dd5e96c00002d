/**
 * Whether to hint keyboard shortcuts ("Ctrl+Enter to send"): on a wide screen with a
 * precise pointer, where a keyboard is likely. On a phone the hint is noise that pushes a
 * placeholder past its box.
 */
import { useMediaQuery } from './useMediaQuery'

export const KEYBOARD_QUERY = '(min-width: 640px) and (hover: hover) and (pointer: fine)'

export function useKeyboardHints() {
  return useMediaQuery(KEYBOARD_QUERY, true)
}
