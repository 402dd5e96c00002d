/**
 * The colour theme: light, dark, or whatever the system prefers. The choice lives in
 * localStorage (per browser); index.html applies it before the first paint, so the page
 * never flashes the other theme, and `applyTheme` keeps it applied afterwards.
 */
export type ThemeChoice = 'light' | 'dark' | 'system'
export type Theme = 'light' | 'dark'

export const THEME_KEY = 'lmix-theme'
/** LMiX was dark before there was a choice; it stays the default. */
export const DEFAULT_THEME: ThemeChoice = 'dark'
const LIGHT_QUERY = '(prefers-color-scheme: light)'

export function isThemeChoice(value: unknown): value is ThemeChoice {
  return value === 'light' || value === 'dark' || value === 'system'
}

export function storedTheme(): ThemeChoice {
  try {
    const value = localStorage.getItem(THEME_KEY)
    return isThemeChoice(value) ? value : DEFAULT_THEME
  } catch {
    return DEFAULT_THEME // storage blocked: the default, every time
  }
}

export function resolveTheme(choice: ThemeChoice): Theme {
  if (choice !== 'system') return choice
  return typeof window.matchMedia === 'function' && window.matchMedia(LIGHT_QUERY).matches ? 'light' : 'dark'
}

/** Show `choice` now: `data-theme` on <html> picks the palette in styles/main.css. */
export function applyTheme(choice: ThemeChoice): Theme {
  const theme = resolveTheme(choice)
  document.documentElement.dataset.theme = theme
  document.documentElement.style.colorScheme = theme
  return theme
}

export function saveTheme(choice: ThemeChoice): Theme {
  try {
    localStorage.setItem(THEME_KEY, choice)
  } catch {
    // Not remembered, but still shown.
  }
  return applyTheme(choice)
}

/** Follow the system's light/dark switch while the choice is "system". Returns the unsubscribe. */
export function followSystemTheme(current: () => ThemeChoice): () => void {
  if (typeof window.matchMedia !== 'function') return () => undefined
  const query = window.matchMedia(LIGHT_QUERY)
  const onChange = () => {
    if (current() === 'system') applyTheme('system')
  }
  query.addEventListener?.('change', onChange)
  return () => query.removeEventListener?.('change', onChange)
}
