/** The sampling and context settings of a model or an assistant, as a form edits them. */
import type { ModelConfig, SamplerPreset } from '@/api/types'

interface NumberSpec {
  label: string
  min: number
  max: number
  step: number
  integer: boolean
  hint: string
}

/** The same ranges the server checks (lmix/llm/params.py). */
export const NUMBER_FIELDS = {
  temperature: { label: 'Temperature', min: 0, max: 2, step: 0.05, integer: false, hint: '0–2' },
  top_p: { label: 'Top p', min: 0, max: 1, step: 0.01, integer: false, hint: '0–1' },
  max_tokens: { label: 'Max tokens', min: 1, max: 200_000, step: 1, integer: true, hint: 'Reply length' },
  context_size: {
    label: 'Context size',
    min: 512,
    max: 2_000_000,
    step: 256,
    integer: true,
    hint: 'Prompt budget; old turns are trimmed',
  },
  frequency_penalty: { label: 'Frequency penalty', min: -2, max: 2, step: 0.05, integer: false, hint: '−2–2' },
  presence_penalty: { label: 'Presence penalty', min: -2, max: 2, step: 0.05, integer: false, hint: '−2–2' },
} satisfies Record<string, NumberSpec>

export type NumberField = keyof typeof NUMBER_FIELDS
export const NUMBER_KEYS = Object.keys(NUMBER_FIELDS) as NumberField[]
export const STOP_MAX = 4
export const STOP_LENGTH_MAX = 100

/** Number inputs give numbers, or '' when empty; `stop` is one sequence per line. */
export type SamplingDraft = Record<NumberField, string | number> & { stop: string }

/** A stop sequence as a line: a line break is written \n. */
const toLine = (stop: string) => stop.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')
const fromLine = (line: string) => line.replace(/\\(\\|n)/g, (_, c: string) => (c === 'n' ? '\n' : '\\'))

export function samplingDraft(config: ModelConfig): SamplingDraft {
  const draft = { stop: Array.isArray(config.stop) ? config.stop.map(toLine).join('\n') : '' } as SamplingDraft
  for (const key of NUMBER_KEYS) draft[key] = typeof config[key] === 'number' ? (config[key] as number) : ''
  return draft
}

function numberOf(value: string | number): number | undefined {
  if (typeof value === 'number') return value
  return value.trim() === '' ? undefined : Number(value)
}

export function parseStops(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map(fromLine)
}

/** Client-side checks, keyed by field (false when fine). */
export function samplingErrors(draft: SamplingDraft): Record<string, string | false> {
  const errors: Record<string, string | false> = {}
  for (const key of NUMBER_KEYS) {
    const spec: NumberSpec = NUMBER_FIELDS[key]
    const v = numberOf(draft[key])
    errors[key] =
      v !== undefined &&
      (Number.isNaN(v) || v < spec.min || v > spec.max || (spec.integer && !Number.isInteger(v))) &&
      (spec.integer
        ? `A whole number from ${spec.min.toLocaleString('en')} to ${spec.max.toLocaleString('en')}.`
        : `Between ${spec.min} and ${spec.max}.`)
  }
  const stops = parseStops(draft.stop)
  errors.stop =
    (stops.length > STOP_MAX && `At most ${STOP_MAX} stop sequences.`) ||
    (stops.some((s) => s.length > STOP_LENGTH_MAX) && `Each at most ${STOP_LENGTH_MAX} characters.`)
  return errors
}

/** The config to send: `base` (keys this form does not edit are kept) with the draft's values. */
export function samplingConfig(draft: SamplingDraft, base: ModelConfig = {}): ModelConfig {
  const out: ModelConfig = { ...base }
  for (const key of NUMBER_KEYS) {
    const v = numberOf(draft[key])
    if (v === undefined) delete out[key]
    else out[key] = v
  }
  const stops = parseStops(draft.stop)
  if (stops.length) out.stop = stops
  else delete out.stop
  return out
}

/** Fill in a preset's values; every other field stays as it was, and all stay editable. */
export function presetApplied(draft: SamplingDraft, preset: SamplerPreset): SamplingDraft {
  const next = { ...draft }
  for (const [key, value] of Object.entries(preset.params)) {
    if (key in NUMBER_FIELDS && typeof value === 'number') next[key as NumberField] = value
  }
  return next
}

/** The preset the draft's values match exactly, if any (to show which one is in use). */
export function matchingPreset(draft: SamplingDraft, presets: readonly SamplerPreset[]): string {
  const found = presets.find((p) =>
    Object.entries(p.params).every(([key, value]) => numberOf(draft[key as NumberField]) === value),
  )
  return found?.name ?? ''
}

/** How many settings the draft sets (for a collapsed section's summary). */
export function settingsCount(draft: SamplingDraft): number {
  return NUMBER_KEYS.filter((k) => numberOf(draft[k]) !== undefined).length + (parseStops(draft.stop).length ? 1 : 0)
}
