/** The colour theme as shared, readonly state, and the way to change it (lib/theme.ts). */
import { readonly, ref } from 'vue'
import { followSystemTheme, saveTheme, storedTheme, type ThemeChoice } from '@/lib/theme'

const choice = ref<ThemeChoice>(storedTheme())
let unfollow: (() => void) | null = null

export function useTheme() {
  unfollow ??= followSystemTheme(() => choice.value)
  function setTheme(next: ThemeChoice) {
    choice.value = next
    saveTheme(next)
  }
  return { theme: readonly(choice), setTheme }
}
