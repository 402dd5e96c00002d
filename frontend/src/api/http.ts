/** Small fetch wrapper: same-origin session cookies, JSON bodies, CSRF header, typed errors. */

export type FieldErrors = Record<string, string[]>

/** An error answer of the API (4xx/5xx), or a network failure (status 0). */
export class ApiError extends Error {
  readonly status: number
  readonly detail: string
  /** Per-field messages; for bulk model creation, one object per item. */
  readonly errors: FieldErrors | FieldErrors[] | undefined

  constructor(status: number, detail: string, errors?: FieldErrors | FieldErrors[]) {
    super(detail)
    this.name = 'ApiError'
    this.status = status
    this.detail = detail
    this.errors = errors
  }

  /** Field errors as one object (empty for bulk or missing errors). */
  get fieldErrors(): FieldErrors {
    return this.errors && !Array.isArray(this.errors) ? this.errors : {}
  }
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

let csrfFallback = ''
let unauthorizedHandler: ((status: number) => void) | null = null

/** Read one cookie by name. */
export function readCookie(name: string): string {
  const prefix = `${name}=`
  for (const part of document.cookie ? document.cookie.split(';') : []) {
    const c = part.trim()
    if (c.startsWith(prefix)) return decodeURIComponent(c.slice(prefix.length))
  }
  return ''
}

/** Remember the token the csrf endpoint returned, for when the cookie cannot be read. */
export function setCsrfToken(token: string): void {
  csrfFallback = token
}

/** Called on 401/403 answers from non-auth endpoints (a lost session). */
export function onUnauthorized(handler: ((status: number) => void) | null): void {
  unauthorizedHandler = handler
}

/** Report a lost session seen elsewhere (a socket closed with 4401). */
export function reportUnauthorized(status = 401): void {
  unauthorizedHandler?.(status)
}

function asMessages(v: unknown): string[] {
  if (Array.isArray(v)) return v.map((x) => (typeof x === 'string' ? x : JSON.stringify(x)))
  if (typeof v === 'string') return [v]
  if (v && typeof v === 'object') return [JSON.stringify(v)]
  return []
}

/** `{field: [...]}`, with nested objects flattened to dotted keys (`config.temperature`). */
function normaliseFieldErrors(raw: unknown, prefix = '', out: FieldErrors = {}): FieldErrors {
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
    for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
      const key = prefix ? `${prefix}.${k}` : k
      if (v && typeof v === 'object' && !Array.isArray(v)) normaliseFieldErrors(v, key, out)
      else out[key] = asMessages(v)
    }
  }
  return out
}

/** Build an ApiError from a response body (any shape the server may send). */
export function errorFromBody(status: number, body: unknown): ApiError {
  let detail = ''
  let errors: FieldErrors | FieldErrors[] | undefined
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const b = body as Record<string, unknown>
    if (typeof b.detail === 'string') detail = b.detail
    if (Array.isArray(b.errors)) errors = b.errors.map((e) => normaliseFieldErrors(e))
    else if (b.errors && typeof b.errors === 'object') errors = normaliseFieldErrors(b.errors)
    else if (!('detail' in b)) errors = normaliseFieldErrors(b) // plain DRF validation body
  } else if (Array.isArray(body)) {
    errors = body.map((e) => normaliseFieldErrors(e))
  }
  if (!detail) {
    const first = errors && !Array.isArray(errors) ? Object.values(errors)[0]?.[0] : undefined
    detail = first ?? defaultMessage(status)
  }
  return new ApiError(status, detail, errors)
}

function defaultMessage(status: number): string {
  if (status === 0) return 'The server could not be reached. Check your connection.'
  if (status === 403) return 'You are not allowed to do that (or your session ended).'
  if (status === 404) return 'Not found.'
  if (status === 409) return 'That conflicts with something already in progress.'
  if (status >= 500) return `The server had a problem (${status}). Try again in a moment.`
  return `Request failed (${status}).`
}

export interface RequestOptions {
  signal?: AbortSignal
  /** Skip the lost-session hook (used by the auth endpoints themselves). */
  quiet?: boolean
}

/** Send one API request; resolves with the parsed JSON (undefined for 204). */
export async function request<T>(
  method: string,
  url: string,
  body?: unknown,
  options: RequestOptions = {},
): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' }
  // A FormData body (a file upload) sets its own multipart type and boundary.
  const form = body instanceof FormData
  if (body !== undefined && !form) headers['Content-Type'] = 'application/json'
  if (UNSAFE.has(method)) {
    const token = readCookie('csrftoken') || csrfFallback
    if (token) headers['X-CSRFToken'] = token
  }
  let res: Response
  try {
    res = await fetch(url, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : form ? body : JSON.stringify(body),
      signal: options.signal,
    })
  } catch (e) {
    if (e instanceof DOMException && e.name === 'AbortError') throw e
    throw new ApiError(0, defaultMessage(0))
  }
  const text = res.status === 204 ? '' : await res.text()
  let data: unknown = undefined
  if (text) {
    try {
      data = JSON.parse(text)
    } catch {
      data = undefined
    }
  }
  if (!res.ok) {
    if ((res.status === 401 || res.status === 403) && !options.quiet) unauthorizedHandler?.(res.status)
    throw errorFromBody(res.status, data)
  }
  return data as T
}

export const http = {
  get: <T>(url: string, o?: RequestOptions) => request<T>('GET', url, undefined, o),
  post: <T>(url: string, body?: unknown, o?: RequestOptions) => request<T>('POST', url, body ?? {}, o),
  put: <T>(url: string, body: unknown, o?: RequestOptions) => request<T>('PUT', url, body, o),
  patch: <T>(url: string, body?: unknown, o?: RequestOptions) => request<T>('PATCH', url, body ?? {}, o),
  delete: <T = void>(url: string, o?: RequestOptions) => request<T>('DELETE', url, undefined, o),
}
