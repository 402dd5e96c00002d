import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { uploadAvatar } from './personas'

describe('uploadAvatar', () => {
  const fetchMock = vi.fn()
  beforeEach(() => {
    vi.stubGlobal('fetch', fetchMock)
    document.cookie = 'csrftoken=tok123; path=/'
  })
  afterEach(() => {
    vi.unstubAllGlobals()
    fetchMock.mockReset()
    document.cookie = 'csrftoken=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/'
  })

  it('posts the file as multipart form data (the browser sets the boundary), with the CSRF header', async () => {
    fetchMock.mockResolvedValue(new Response(JSON.stringify({ id: 'p1', avatar_url: '/media/avatars/a.png' }), { status: 200 }))
    const file = new File(['png'], 'face.png', { type: 'image/png' })
    const out = await uploadAvatar('p1', file)

    expect(out.avatar_url).toBe('/media/avatars/a.png')
    const [url, init] = fetchMock.mock.calls[0] as [string, RequestInit]
    expect(url).toBe('/api/personas/p1/avatar')
    expect(init.method).toBe('POST')
    expect(init.body).toBeInstanceOf(FormData)
    expect((init.body as FormData).get('avatar')).toBeInstanceOf(File)
    const headers = init.headers as Record<string, string>
    expect(headers['Content-Type']).toBeUndefined()
    expect(headers['X-CSRFToken']).toBe('tok123')
  })
})
