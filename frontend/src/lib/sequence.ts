/**
 * Keeping a local copy of server state in step with a socket that may drop messages.
 *
 * Two kinds of message are numbered. State events carry the server's `seq` (+1 per event;
 * a REST snapshot reports the last one it holds). Streamed deltas carry no seq but an
 * `index` within their stream (0, 1, 2… per run of the stream): the server checkpoints a
 * stream's text now and then, and the local state knows how many deltas of each stream it
 * holds (the caller's `position`). A message already held is dropped; one that leaves a
 * hole means something was missed, and the state is re-read; messages that arrive
 * meanwhile are buffered and replayed on top of the fresh snapshot.
 */
import { backoffDelay, type BackoffOptions } from './backoff'

export type Verdict = 'apply' | 'stale' | 'gap'

/** Anything with a `type`; numbered messages also carry `seq` or (deltas) `index`. */
export interface LiveMessage {
  type: string
}

export interface StreamRules<M> {
  /** The stream a delta belongs to (e.g. a turn id), or undefined when `msg` is no delta. */
  of(msg: M): string | undefined
  /**
   * How many deltas of `stream` the local state holds, so the next one expected. Infinity
   * once the stream is closed (late deltas are dropped); undefined for a stream the state
   * does not know (counted as a gap).
   */
  position(stream: string): number | undefined
}

export interface SyncRules<M> {
  /** The `seq` of a state event, undefined for unnumbered messages. Default: `msg.seq`. */
  seqOf?: (msg: M) => number | undefined
  /** Streamed deltas; without it no message is treated as one. */
  streams?: StreamRules<M>
}

const defaultSeqOf = (msg: unknown): number | undefined => {
  const seq = (msg as { seq?: unknown }).seq
  return typeof seq === 'number' ? seq : undefined
}

/** What to do with `msg` given the last applied `seq`: apply it, drop it, or re-read. */
export function classify<M>(msg: M, lastSeq: number, rules: SyncRules<M>): Verdict {
  const stream = rules.streams?.of(msg)
  if (stream !== undefined) {
    const index = (msg as { index?: unknown }).index
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0) return 'stale' // malformed
    const at = rules.streams!.position(stream)
    if (at === undefined) return 'gap'
    if (index < at) return 'stale'
    return index === at ? 'apply' : 'gap'
  }
  const seq = (rules.seqOf ?? defaultSeqOf)(msg)
  if (seq === undefined) return 'apply'
  if (seq <= lastSeq) return 'stale'
  return seq === lastSeq + 1 ? 'apply' : 'gap'
}

export interface EventSyncOptions<M> extends SyncRules<M> {
  /**
   * Apply one in-order message to the local state (a delta must move its stream's
   * position to index + 1). Return false when it cannot be placed: the state is re-read.
   */
  apply(msg: M): boolean | void
  /**
   * Re-read the whole state and resolve with the `seq` it holds. `since` is the last seq
   * applied locally (null before any snapshot): when the fresh one equals it, no state
   * event was missed, so local streams ahead of the snapshot's checkpoint may be kept.
   */
  resync(since: number | null): Promise<number>
  /** A re-read failed; it is retried with backoff. */
  onError?(error: unknown): void
  /** `syncing` or `lastSeq` changed (to mirror them in reactive state). */
  onChange?(): void
  /** Delays before re-reading again after a failure, or after a snapshot that does not
   *  yet hold what the buffer needs (a stream's checkpoint lags its live deltas). */
  retry?: BackoffOptions
}

const RETRY: BackoffOptions = { baseMs: 400, maxMs: 5_000 }

/**
 * Feeds messages to `apply` in order. On a gap (or a message `apply` refuses) it re-reads
 * the state, buffering what arrives meanwhile, then replays the buffer: what the snapshot
 * already holds is dropped, the rest applied. If the snapshot does not reach the buffer
 * (its checkpoint lags), it re-reads again after a backoff instead of skipping the hole.
 */
export class EventSync<M> {
  /** The last state event applied or held by the last snapshot; null before a snapshot. */
  lastSeq: number | null = null
  private buffer: M[] = []
  private running = false
  private again = false
  private current: Promise<void> | null = null
  private timer: ReturnType<typeof setTimeout> | null = null
  private retries = 0
  private epoch = 0
  private stopped = false

  constructor(private readonly opts: EventSyncOptions<M>) {}

  /** A re-read runs or is scheduled; messages are being buffered. */
  get syncing(): boolean {
    return this.running || this.timer !== null
  }

  /** How many messages wait for the re-read. */
  get buffered(): number {
    return this.buffer.length
  }

  handle(msg: M): void {
    if (this.stopped) return
    if (this.syncing || this.lastSeq === null) {
      this.buffer.push(msg)
      if (!this.syncing) void this.resync()
      return
    }
    const verdict = classify(msg, this.lastSeq, this.opts)
    if (verdict === 'stale') return
    if (verdict === 'apply' && this.opts.apply(msg) !== false) {
      this.advance(msg)
      return
    }
    this.buffer.push(msg)
    void this.resync()
  }

  /**
   * Re-read now (after every (re)connect, or on demand). While one runs, a new request
   * makes it read once more when it ends, so a snapshot always follows the request.
   */
  resync(): Promise<void> {
    if (this.stopped) return Promise.resolve()
    this.clearTimer()
    if (this.running) {
      this.again = true
      return this.current ?? Promise.resolve()
    }
    this.running = true
    this.opts.onChange?.()
    this.current = this.run().finally(() => {
      this.running = false
      this.current = null
      this.opts.onChange?.()
    })
    return this.current
  }

  /** Follow another source: forget the seq and the buffer (a read in flight is ignored). */
  reset(): void {
    this.epoch += 1
    this.stopped = false
    this.lastSeq = null
    this.buffer = []
    this.retries = 0
    this.again = false
    this.clearTimer()
    this.opts.onChange?.()
  }

  /** Stop for good (the socket is closed): no more re-reads, nothing applied. */
  stop(): void {
    this.stopped = true
    this.epoch += 1
    this.buffer = []
    this.again = false
    this.clearTimer()
    this.opts.onChange?.()
  }

  private async run(): Promise<void> {
    do {
      this.again = false
      const epoch = this.epoch
      let seq: number
      try {
        seq = await this.opts.resync(this.lastSeq)
      } catch (error) {
        if (epoch !== this.epoch) continue
        this.opts.onError?.(error)
        if (!this.again) return this.schedule()
        continue
      }
      if (epoch !== this.epoch) continue
      this.lastSeq = seq
      const caughtUp = this.replay()
      this.opts.onChange?.()
      if (!caughtUp && !this.again) return this.schedule()
    } while (this.again && !this.stopped)
    this.retries = 0
  }

  /** Apply the buffer on top of the snapshot; false if it stopped at a hole. */
  private replay(): boolean {
    const queued = this.buffer
    this.buffer = []
    for (let i = 0; i < queued.length; i++) {
      const msg = queued[i] as M
      const verdict = classify(msg, this.lastSeq ?? 0, this.opts)
      if (verdict === 'stale') continue
      if (verdict === 'gap' || this.opts.apply(msg) === false) {
        // Keep the rest in order for the next snapshot, which will reach further.
        this.buffer = queued.slice(i).concat(this.buffer)
        return false
      }
      this.advance(msg)
    }
    return true
  }

  private advance(msg: M): void {
    if (this.opts.streams?.of(msg) !== undefined) return
    const seq = (this.opts.seqOf ?? defaultSeqOf)(msg)
    if (seq === undefined || (this.lastSeq !== null && seq <= this.lastSeq)) return
    this.lastSeq = seq
    this.opts.onChange?.()
  }

  private schedule(): void {
    if (this.stopped) return
    const delay = backoffDelay(this.retries, { ...RETRY, ...this.opts.retry })
    this.retries += 1
    this.timer = setTimeout(() => {
      this.timer = null
      void this.resync()
    }, delay)
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
  }
}
