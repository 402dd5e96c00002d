/**
 * The model discovery wizard (spec §1.1) as plain state and functions:
 * 1. provider — preset, endpoint, key; 2. discover — the browser lists the provider's
 * models (or the server-side test does); 3. select — pick many, then bulk add.
 * Moving between steps never clears what was entered or picked.
 */
import type { Model, ModelInput, Provider } from '@/api/types'

export type PresetKey = 'openai' | 'anthropic' | 'ollama' | 'custom' | 'offline'
export type WizardStep = 'provider' | 'discover' | 'select'
export const STEPS: WizardStep[] = ['provider', 'discover', 'select']

export interface Preset {
  key: PresetKey
  label: string
  provider: Provider
  endpoint: string
  keyRequired: boolean
  hint: string
  /** A built-in model list: the browser asks nobody. */
  models?: readonly string[]
  /** Nothing to connect to: no endpoint or key is asked for. */
  builtIn?: boolean
}

/** Where the offline narrator lives, and its one model (lmix/models.py OFFLINE_ENDPOINT). */
export const OFFLINE_ENDPOINT = 'offline://narrator'
export const OFFLINE_MODELS = ['narrator'] as const

export const PRESETS: Record<PresetKey, Preset> = {
  openai: {
    key: 'openai',
    label: 'OpenAI',
    provider: 'openai',
    endpoint: 'https://api.openai.com/v1',
    keyRequired: true,
    hint: 'Needs an API key from platform.openai.com.',
  },
  anthropic: {
    key: 'anthropic',
    label: 'Anthropic',
    provider: 'anthropic',
    endpoint: 'https://api.anthropic.com/v1',
    keyRequired: true,
    hint: 'Needs an API key from console.anthropic.com. Models come from a built-in list.',
  },
  ollama: {
    key: 'ollama',
    label: 'Ollama',
    provider: 'ollama',
    endpoint: 'http://localhost:11434',
    keyRequired: false,
    hint: 'Local models served by Ollama; no key needed.',
  },
  custom: {
    key: 'custom',
    label: 'Custom (OpenAI-compatible)',
    provider: 'openai_compatible',
    endpoint: '',
    keyRequired: false,
    hint: 'vLLM, LM Studio, OpenRouter, llama.cpp… any server with an OpenAI-style /models.',
  },
  offline: {
    key: 'offline',
    label: 'Offline narrator',
    provider: 'offline',
    endpoint: OFFLINE_ENDPOINT,
    keyRequired: false,
    hint: 'The built-in deterministic narrator: no network, no key. Good for trying LMiX out.',
    models: OFFLINE_MODELS,
    builtIn: true,
  },
}

/** Anthropic has no browser-friendly model listing; offer these. */
export const ANTHROPIC_MODELS = [
  'claude-opus-4-1',
  'claude-opus-4-0',
  'claude-sonnet-4-5',
  'claude-sonnet-4-0',
  'claude-3-7-sonnet-latest',
  'claude-3-5-haiku-latest',
]

export type DiscoverySource = 'browser' | 'server' | 'static' | 'manual'

export interface WizardState {
  step: WizardStep
  preset: PresetKey
  endpoint: string
  apiKey: string
  discovery: {
    status: 'idle' | 'loading' | 'ok' | 'error'
    source: DiscoverySource | null
    models: string[]
    error: string
    /** endpoint|key the list belongs to: a change makes step 2 fetch again. */
    forKey: string
  }
  serverTest: {
    status: 'idle' | 'loading' | 'ok' | 'error'
    error: string
    latencyMs: number | null
  }
  manualIds: string[]
  selected: string[]
  filter: string
  /** Errors of the last bulk add, by model id. */
  itemErrors: Record<string, string[]>
  /** Endpoint and key typed for each preset, restored when switching back. */
  remembered: Partial<Record<PresetKey, { endpoint: string; apiKey: string }>>
}

export function createWizard(preset: PresetKey = 'openai'): WizardState {
  return {
    step: 'provider',
    preset,
    endpoint: PRESETS[preset].endpoint,
    apiKey: '',
    discovery: { status: 'idle', source: null, models: [], error: '', forKey: '' },
    serverTest: { status: 'idle', error: '', latencyMs: null },
    manualIds: [],
    selected: [],
    filter: '',
    itemErrors: {},
    remembered: {},
  }
}

/** Trim and drop trailing slashes: "https://x/v1/" → "https://x/v1". */
export function normaliseEndpoint(url: string): string {
  return url.trim().replace(/\/+$/, '')
}

/** Pick a preset. Each preset remembers the endpoint and key last typed for it. */
export function choosePreset(s: WizardState, key: PresetKey): void {
  if (key === s.preset) return
  s.remembered[s.preset] = { endpoint: s.endpoint, apiKey: s.apiKey }
  const memory = s.remembered[key]
  s.preset = key
  s.endpoint = memory?.endpoint ?? PRESETS[key].endpoint
  s.apiKey = memory?.apiKey ?? ''
}

/** Step 1 problems by field (endpoint, apiKey); empty when the step is complete. */
export function providerErrors(s: WizardState): Record<string, string> {
  const errors: Record<string, string> = {}
  const endpoint = normaliseEndpoint(s.endpoint)
  if (PRESETS[s.preset].builtIn) return errors
  if (!endpoint) errors.endpoint = 'Enter the API endpoint.'
  else if (!/^https?:\/\/[^\s/]+/i.test(endpoint)) errors.endpoint = 'Use a full http:// or https:// URL.'
  if (PRESETS[s.preset].keyRequired && !s.apiKey.trim()) errors.apiKey = `${PRESETS[s.preset].label} needs an API key.`
  return errors
}

export interface DiscoveryRequest {
  url: string
  headers: Record<string, string>
}

/** How the browser lists models for this provider; null when the list is static. */
export function discoveryRequest(preset: PresetKey, endpoint: string, apiKey = ''): DiscoveryRequest | null {
  const base = normaliseEndpoint(endpoint)
  if (preset === 'anthropic' || PRESETS[preset].models) return null
  if (preset === 'ollama') return { url: `${base.replace(/\/v1$/, '')}/api/tags`, headers: {} }
  const headers: Record<string, string> = {}
  if (apiKey.trim()) headers.Authorization = `Bearer ${apiKey.trim()}`
  return { url: `${base}/models`, headers }
}

/** Model ids from a provider's answer: OpenAI-style `{data:[{id}]}` or Ollama `{models:[{name}]}`. */
export function parseModelList(body: unknown): string[] {
  const ids: string[] = []
  if (body && typeof body === 'object') {
    const b = body as { data?: unknown; models?: unknown }
    const list = Array.isArray(b.data) ? b.data : Array.isArray(b.models) ? b.models : null
    if (!list) throw new Error('The provider answered, but not with a model list.')
    for (const item of list) {
      if (typeof item === 'string') ids.push(item)
      else if (item && typeof item === 'object') {
        const o = item as { id?: unknown; name?: unknown; model?: unknown }
        const id = o.id ?? o.name ?? o.model
        if (typeof id === 'string' && id) ids.push(id)
      }
    }
  } else {
    throw new Error('The provider answered, but not with a model list.')
  }
  return [...new Set(ids)].sort((a, b) => a.localeCompare(b))
}

/** The endpoint+key fingerprint a discovered list belongs to. */
export const discoveryKey = (s: WizardState) => `${s.preset}|${normaliseEndpoint(s.endpoint)}|${s.apiKey.trim()}`

/** True when step 2 must (re)fetch: first visit, or the endpoint/key changed. */
export function needsDiscovery(s: WizardState): boolean {
  return s.discovery.status === 'idle' || s.discovery.forKey !== discoveryKey(s)
}

export function discoveryStarted(s: WizardState): void {
  s.discovery = { status: 'loading', source: null, models: [], error: '', forKey: discoveryKey(s) }
  s.serverTest = { status: 'idle', error: '', latencyMs: null }
}

export function discoverySucceeded(s: WizardState, models: string[], source: DiscoverySource): void {
  s.discovery = { status: 'ok', source, models: [...new Set(models)], error: '', forKey: discoveryKey(s) }
}

export function discoveryFailed(s: WizardState, error: string): void {
  s.discovery = { ...s.discovery, status: 'error', source: null, models: [], error, forKey: discoveryKey(s) }
}

/** Server-side test result: its model list (if any) feeds step 3. */
export function serverTestFinished(
  s: WizardState,
  result: { ok: boolean; latency_ms?: number; models?: string[]; error?: string },
): void {
  s.serverTest = {
    status: result.ok ? 'ok' : 'error',
    error: result.ok ? '' : result.error || 'The server could not reach the provider either.',
    latencyMs: result.latency_ms ?? null,
  }
  if (result.ok && result.models?.length) discoverySucceeded(s, result.models, 'server')
}

/** Add a model id typed by hand (selected straight away). Returns false if blank. */
export function addManualId(s: WizardState, raw: string): boolean {
  const id = raw.trim()
  if (!id) return false
  if (!s.manualIds.includes(id) && !s.discovery.models.includes(id)) s.manualIds.push(id)
  if (!s.selected.includes(id)) s.selected.push(id)
  return true
}

/** Every id on offer: discovered ones, then those typed by hand. */
export function availableModels(s: WizardState): string[] {
  return [...new Set([...s.discovery.models, ...s.manualIds])]
}

/** The ids shown under the current filter (case-insensitive substring). */
export function visibleModels(s: WizardState): string[] {
  const f = s.filter.trim().toLowerCase()
  const all = availableModels(s)
  return f ? all.filter((id) => id.toLowerCase().includes(f)) : all
}

export function toggleModel(s: WizardState, id: string, on?: boolean): void {
  const has = s.selected.includes(id)
  const want = on ?? !has
  if (want && !has) s.selected.push(id)
  if (!want && has) s.selected = s.selected.filter((x) => x !== id)
}

/** Select every visible model not already added, or unselect them all if they already are. */
export function toggleAllVisible(s: WizardState, added: Readonly<Record<string, string>> = {}): void {
  const visible = visibleModels(s).filter((id) => !(id in added))
  const all = visible.length > 0 && visible.every((id) => s.selected.includes(id))
  for (const id of visible) toggleModel(s, id, !all)
}

/**
 * The URL a model is called at, for telling models apart as the server does
 * (lmix/services.py `_same_model`): no trailing slash or pasted call path, the host in
 * any case, and an Ollama root the same as its /v1.
 */
export function serverKey(provider: Provider, endpoint: string): string {
  let url = normaliseEndpoint(endpoint).replace(/\/(chat\/completions|completions|messages|models)$/i, '')
  url = url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/]*)/i, (origin) => origin.toLowerCase())
  if (provider === 'ollama') url = url.replace(/\/v1$/, '')
  return url
}

/**
 * The discovered ids the user already has a model for at this endpoint, with that model's
 * name: the wizard marks them and "select all" skips them (a bulk add refuses them when the
 * key is the same too).
 */
export function alreadyAdded(s: WizardState, models: readonly Model[]): Record<string, string> {
  const here = serverKey(PRESETS[s.preset].provider, s.endpoint)
  const added: Record<string, string> = {}
  for (const m of models) {
    if (serverKey(m.provider, m.api_endpoint) === here && !(m.model_id in added)) added[m.model_id] = m.name
  }
  return added
}

/** Selected ids that are still on offer, in list order. */
export function chosenModels(s: WizardState): string[] {
  return availableModels(s).filter((id) => s.selected.includes(id))
}

export function canAdvance(s: WizardState): boolean {
  if (s.step === 'provider') return Object.keys(providerErrors(s)).length === 0
  if (s.step === 'discover') return s.discovery.status !== 'loading' && availableModels(s).length > 0
  return chosenModels(s).length > 0
}

export function goNext(s: WizardState): boolean {
  if (!canAdvance(s) || s.step === 'select') return false
  s.step = STEPS[STEPS.indexOf(s.step) + 1] ?? s.step
  return true
}

export function goBack(s: WizardState): void {
  const i = STEPS.indexOf(s.step)
  if (i > 0) s.step = STEPS[i - 1] ?? s.step
}

/** The POST /api/models array: one item per chosen id; blank names are generated server-side. */
export function bulkPayload(s: WizardState): ModelInput[] {
  const endpoint = normaliseEndpoint(s.endpoint)
  const key = s.apiKey.trim()
  return chosenModels(s).map((model_id) => {
    const item: ModelInput = { provider: PRESETS[s.preset].provider, api_endpoint: endpoint, model_id }
    if (key && !PRESETS[s.preset].builtIn) item.api_key = key
    return item
  })
}

/** Map a bulk 400's per-item errors back onto the model ids they belong to. */
export function applyBulkErrors(
  s: WizardState,
  payload: ModelInput[],
  errors: Record<string, string[]>[] | undefined,
): void {
  s.itemErrors = {}
  payload.forEach((item, i) => {
    const e = errors?.[i]
    if (!e) return
    const messages = Object.entries(e).flatMap(([field, msgs]) =>
      msgs.map((m) => (field === 'non_field_errors' || field === 'detail' || field === 'model_id' ? m : `${field}: ${m}`)),
    )
    if (messages.length) s.itemErrors[item.model_id] = messages
  })
}
