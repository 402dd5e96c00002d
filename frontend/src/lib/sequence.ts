/**
 * Ordering of production events. The server numbers every message (`seq`, +1 each) and
 * every token of a turn (`index`, 0,1,2…). A jump in either means something was dropped:
 * the client then re-reads the production over REST and continues from its `event_seq`.
 */

export interface SequencedMessage {
  type: string
  seq?: number
  turn?: unknown
  index?: number
}

export type Verdict = 'apply' | 'stale' | 'gap'

/** Tracks the last applied seq and each streaming turn's last token index. */
export class SeqTracker {
  lastSeq: number
  /** turn id → index of the last token applied (-1: created, no token yet). */
  private tokens = new Map<string, number>()

  constructor(lastSeq = 0) {
    this.lastSeq = lastSeq
  }

  /** Start again from a fresh snapshot whose last event was `seq`. */
  reset(seq: number): void {
    this.lastSeq = seq
    this.tokens.clear()
  }

  /** What to do with `msg`: apply it, drop it (already in the snapshot), or resync (gap). */
  check(msg: SequencedMessage): Verdict {
    if (typeof msg.seq !== 'number') return 'apply'
    if (msg.seq <= this.lastSeq) return 'stale'
    if (msg.seq !== this.lastSeq + 1) return 'gap'
    if (msg.type === 'turn.token' && typeof msg.turn === 'string' && typeof msg.index === 'number') {
      const last = this.tokens.get(msg.turn)
      // Unknown baseline (turn came from a snapshot mid-stream): accept and start tracking.
      if (last !== undefined && msg.index !== last + 1) return 'gap'
    }
    return 'apply'
  }

  /** Record `msg` as applied. */
  accept(msg: SequencedMessage): void {
    if (typeof msg.seq === 'number') this.lastSeq = msg.seq
    const turnId = typeof msg.turn === 'string' ? msg.turn : (msg.turn as { id?: string } | undefined)?.id
    if (!turnId) return
    if (msg.type === 'turn.created') this.tokens.set(turnId, -1)
    else if (msg.type === 'turn.token' && typeof msg.index === 'number') this.tokens.set(turnId, msg.index)
    else if (msg.type === 'turn.done' || msg.type === 'turn.failed') this.tokens.delete(turnId)
  }
}

export interface EventSyncOptions<M extends SequencedMessage> {
  /** Apply one message to local state; return false if it cannot be applied (unknown turn). */
  apply(msg: M): boolean
  /** Re-read the whole state; resolve with its `event_seq`. */
  resync(): Promise<number>
  /** Called when a resync fails (e.g. offline); the next message retries. */
  onError?(error: unknown): void
}

/**
 * Feeds socket messages to `apply` in order, buffering them while a resync runs and
 * replaying the ones newer than the snapshot afterwards.
 */
export class EventSync<M extends SequencedMessage> {
  readonly tracker: SeqTracker
  private buffer: M[] = []
  private running: Promise<void> | null = null
  private needsResync = false

  constructor(
    private readonly opts: EventSyncOptions<M>,
    initialSeq = 0,
  ) {
    this.tracker = new SeqTracker(initialSeq)
  }

  get syncing(): boolean {
    return this.running !== null
  }

  /** Start from a snapshot loaded outside of this object. */
  reset(seq: number): void {
    this.tracker.reset(seq)
    this.needsResync = false
  }

  handle(msg: M): void {
    if (this.running) {
      this.buffer.push(msg)
      return
    }
    if (this.needsResync) {
      this.buffer.push(msg)
      void this.resync()
      return
    }
    const verdict = this.tracker.check(msg)
    if (verdict === 'stale') return
    if (verdict === 'gap' || !this.opts.apply(msg)) {
      this.buffer.push(msg)
      void this.resync()
      return
    }
    this.tracker.accept(msg)
  }

  /** Re-read the state now (also after every (re)connect). Concurrent calls share one run. */
  resync(): Promise<void> {
    if (this.running) return this.running
    this.running = this.run().finally(() => {
      this.running = null
    })
    return this.running
  }

  private async run(): Promise<void> {
    let seq: number
    try {
      seq = await this.opts.resync()
    } catch (e) {
      this.needsResync = true
      this.buffer = []
      this.opts.onError?.(e)
      return
    }
    this.tracker.reset(seq)
    this.needsResync = false
    // Messages queued meanwhile: drop those already in the snapshot, apply the rest. A gap
    // here is tolerated (adopting the message's seq) so a lagging snapshot cannot loop us;
    // any tokens missed are replaced by the turn's final text on turn.done.
    const queued = this.buffer
    this.buffer = []
    for (const msg of queued) {
      const verdict = this.tracker.check(msg)
      if (verdict === 'stale') continue
      if (verdict === 'gap' && typeof msg.seq === 'number') this.tracker.reset(msg.seq - 1)
      if (this.opts.apply(msg)) this.tracker.accept(msg)
      else if (typeof msg.seq === 'number') this.tracker.lastSeq = msg.seq
    }
  }
}
