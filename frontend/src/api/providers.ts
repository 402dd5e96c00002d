/** Browser-side model discovery: the browser asks the provider itself for its model list. */
import { ANTHROPIC_MODELS, PRESETS, discoveryRequest, parseModelList, type PresetKey } from '@/lib/wizard'

/** Why the browser could not list models, in words a user can act on. */
export class DiscoveryError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message)
    this.name = 'DiscoveryError'
  }
}

export async function discoverModels(
  preset: PresetKey,
  endpoint: string,
  apiKey = '',
  fetchImpl: typeof fetch = (...args) => fetch(...args),
): Promise<string[]> {
  const req = discoveryRequest(preset, endpoint, apiKey)
  if (!req) return [...(PRESETS[preset].models ?? ANTHROPIC_MODELS)]
  let res: Response
  try {
    // No cookies: this goes to a third party.
    res = await fetchImpl(req.url, { headers: req.headers, credentials: 'omit', mode: 'cors' })
  } catch {
    throw new DiscoveryError(
      `Your browser could not reach ${req.url}. The provider may be offline, or it does not allow requests from web pages (CORS).`,
      null,
    )
  }
  if (res.status === 401 || res.status === 403) {
    throw new DiscoveryError(`The provider refused the request (HTTP ${res.status}): check the API key.`, res.status)
  }
  if (!res.ok) throw new DiscoveryError(`The provider answered HTTP ${res.status} for ${req.url}.`, res.status)
  let body: unknown
  try {
    body = await res.json()
  } catch {
    throw new DiscoveryError('The provider answered, but not with JSON.', res.status)
  }
  try {
    return parseModelList(body)
  } catch (e) {
    throw new DiscoveryError((e as Error).message, res.status)
  }
}
