/** A WebSocket stand-in for specs: records what is sent, lets the test push messages and closes. */
export class FakeSocket {
  static last: FakeSocket | null = null
  readyState = 0
  sent: unknown[] = []
  onopen: (() => void) | null = null
  onmessage: ((e: { data: string }) => void) | null = null
  onclose: ((e: { code: number }) => void) | null = null
  onerror: (() => void) | null = null
  constructor(readonly url: string) {
    FakeSocket.last = this
  }
  send(data: string) {
    this.sent.push(JSON.parse(data))
  }
  close() {
    this.readyState = 3
  }
  /** The server accepted the socket and joined its groups. */
  open() {
    this.readyState = 1
    this.onopen?.()
    this.push({ type: 'ready' })
  }
  push(msg: unknown) {
    this.onmessage?.({ data: JSON.stringify(msg) })
  }
}
