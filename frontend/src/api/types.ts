/** Types of the LMiX REST API payloads, as the backend contract defines them. */

export type Uuid = string

export interface User {
  id: number | string
  username: string
  email: string
}

export type Provider = 'openai' | 'openai_compatible' | 'ollama' | 'anthropic' | 'offline'

export type StructuredMode = 'json_schema' | 'grammar' | 'json_object' | 'prompt' | 'tool'

/** A model's default parameters, or an assistant's overrides of them. */
export interface ModelConfig {
  temperature?: number
  max_tokens?: number
  top_p?: number
  /** The prompt budget in tokens (history is trimmed to fit); never sent to the provider. */
  context_size?: number
  /** Set when the server reported `context_size` (not typed): found again when the model moves. */
  context_size_discovered?: boolean
  /** How structured calls ask for JSON; absent: negotiated by the first one, then stored. */
  structured_mode?: StructuredMode
  /** At most 4. */
  stop?: string[]
  /** Not sent to Anthropic, which has none. */
  frequency_penalty?: number
  presence_penalty?: number
  [key: string]: unknown
}

/** A named starting point for the sampling parameters. */
export interface SamplerPreset {
  name: string
  params: Pick<ModelConfig, 'temperature' | 'top_p' | 'frequency_penalty' | 'presence_penalty'>
}

export interface PromptPlaceholder {
  name: string
  description: string
}

/** GET /api/prompt-controls: what the assistant and model forms offer. */
export interface PromptControls {
  presets: SamplerPreset[]
  default_template: string
  placeholders: PromptPlaceholder[]
}

export interface Model {
  id: Uuid
  name: string
  provider: Provider
  api_endpoint: string
  has_api_key: boolean
  /** A key is stored but no longer decrypts (server key changed): enter it again. */
  key_unreadable?: boolean
  model_id: string
  config: ModelConfig
  /** A local server that did not report its context size, and none is set: the form asks. */
  context_size_unknown?: boolean
  is_default: boolean
  created_at: string
  updated_at: string
}

export interface ModelInput {
  name?: string
  provider?: Provider
  api_endpoint: string
  /** Write-only. Omitted or '' keeps the stored key on update; null clears it. */
  api_key?: string | null
  model_id: string
  config?: ModelConfig
  is_default?: boolean
}

export interface ModelTestInput {
  id?: Uuid
  api_endpoint?: string
  api_key?: string
  model_id?: string
  provider?: Provider
}

export interface ModelTestResult {
  ok: boolean
  latency_ms: number
  models?: string[]
  error?: string
  /** The context size the server reports; null when unknown. */
  context_size?: number | null
  /** A local server reached that did not report its context size: what to do. */
  context_size_hint?: string
}

interface Stamped {
  id: Uuid
  created_at: string
  updated_at: string
}

export interface World extends Stamped {
  name: string
  description: string
  /** How many recent turns are searched for lore keys (0: the lorebook is off). */
  lore_scan_depth: number
  /** The most tokens of triggered lore one prompt may hold. */
  lore_budget: number
}
export type WorldInput = Pick<World, 'name' | 'description'> & Partial<Pick<World, 'lore_scan_depth' | 'lore_budget'>>

/** Who may know a lore entry: everyone, the members of one affiliation, or one persona. */
export type LoreLayer = 'universal' | 'affiliation' | 'persona'

export interface LoreEntry extends Stamped {
  world: Uuid
  keys: string[]
  content: string
  enabled: boolean
  layer: LoreLayer
  affiliation: Uuid | null
  persona: Uuid | null
  priority: number
}
export type LoreEntryInput = Pick<LoreEntry, 'keys' | 'content' | 'enabled' | 'layer' | 'affiliation' | 'persona' | 'priority'>

export interface Scenario extends Stamped {
  name: string
  description: string
}
export type ScenarioInput = Pick<Scenario, 'name' | 'description'>

export interface Affiliation extends Stamped {
  name: string
  universal_truth: string
  internal_truth: string
  external_truth: string
}
export type AffiliationInput = Pick<
  Affiliation,
  'name' | 'universal_truth' | 'internal_truth' | 'external_truth'
>

export interface Persona extends Stamped {
  name: string
  /** The name other characters know it by ('' = its name); the real one only it and fellow covert members see. */
  known_as: string
  /** An http(s) image URL, or `/media/avatars/…` after an upload. */
  avatar_url: string
  style: string
  /** Its first message: the opening turn of a production it starts. */
  greeting: string
  /** Sample lines in its voice; only its own prompt reads them. */
  example_dialogue: string
  /** Short labels for finding it (the server drops blanks and repeats). */
  tags: string[]
  universal_truth: string
  internal_truth: string
  external_truth: string
  affiliations: Uuid[]
  /** Among `affiliations`: memberships only fellow members of the group see. */
  covert_affiliations: Uuid[]
}
export type PersonaInput = Pick<
  Persona,
  | 'name'
  | 'known_as'
  | 'avatar_url'
  | 'style'
  | 'greeting'
  | 'example_dialogue'
  | 'tags'
  | 'universal_truth'
  | 'internal_truth'
  | 'external_truth'
  | 'affiliations'
  | 'covert_affiliations'
>

export interface Assistant extends Stamped {
  persona: Uuid
  model: Uuid
  name: string
  config_override: ModelConfig
  /** Its system prompt with placeholders; '' uses the default. */
  system_prompt_template: string
  display_name: string
  persona_name: string
  avatar_url: string
  model_name: string
}
export type AssistantInput = Pick<Assistant, 'persona' | 'model' | 'name' | 'config_override'> &
  Partial<Pick<Assistant, 'system_prompt_template'>>

export interface ProductionSummary extends Stamped {
  name: string
  world: Uuid
  scenario: Uuid
  world_name: string
  scenario_name: string
  assistants: Uuid[]
  show_directive: boolean
  /** After a director's note or a line written as a character, the next speaker answers. */
  auto_reply: boolean
  turn_count: number
}
export type ProductionInput = Pick<
  ProductionSummary,
  'name' | 'world' | 'scenario' | 'assistants' | 'show_directive'
>

export interface CastMember {
  id: Uuid
  display_name: string
  persona: Uuid
  persona_name: string
  avatar_url: string
  model_name: string
  model_id: string
  provider: Provider
}

export type TurnStatus = 'pending' | 'streaming' | 'done' | 'failed' | 'stopped'

export interface DirectiveMessage {
  role: string
  content: string
}

export interface Turn {
  id: Uuid
  parent: Uuid | null
  depth: number
  /** Generated by an assistant, a director's note, or written by the user as a cast member. */
  speaker_kind: 'assistant' | 'director' | 'persona'
  assistant: Uuid | null
  speaker_name: string
  avatar_url: string
  content: string
  /** How many streamed deltas `content` already holds (tokens below it are duplicates). */
  token_count: number
  /** Generation runs started (a run is restarted when its worker died). */
  attempts: number
  status: TurnStatus
  error: string
  model_id: string
  prompt_tokens: number | null
  completion_tokens: number | null
  latency_ms: number | null
  created_at: string
  /** Its text was changed by hand. */
  edited_at: string | null
  directive?: DirectiveMessage[]
}

export interface ProductionDetail extends ProductionSummary {
  cast: CastMember[]
  turns: Turn[]
  head: Uuid | null
  autoplay_remaining: number
  event_seq: number
}

export interface TurnCreateInput {
  assistant?: Uuid
  /** Speak as this cast member's persona: `content` is written in its voice. */
  persona?: Uuid
  parent?: Uuid | null
  content?: string
}

// Events the production and frame sockets send (their control frames `ready`, `pong` and
// `error` are useLiveSocket's): generated from the server's models by `make types`.
export type { AutoplayStop, FrameMessage, PassSummary, ServerMessage } from './events'
export type DraftMessage = Extract<ServerMessage, { type: `draft.${string}` }>
export type WindowCancelCause = NonNullable<WindowCancelled['cause']>
import type { ServerMessage, WindowCancelled } from './events'

// ---------- Frames (live scenes): synthesis/selectors.py, synthesis/events.py ----------

export type FrameStatus = 'open' | 'paused' | 'closed'
/** per_character: each character its own window and narrative; shared: one prose for all. */
export type FrameMode = 'per_character' | 'shared'
/** Who reads submitted intentions: everyone, each player their own, or only the GM. */
export type LiquidVisibility = 'all' | 'own' | 'gm'
export type SeatController = 'open' | 'human' | 'ai'

/** GET /api/frames: a frame I run or sit in. */
export interface FrameSummary {
  id: Uuid
  name: string
  production: Uuid
  production_name: string
  status: FrameStatus
  mode: FrameMode
  is_gm: boolean
  created_at: string
}

/** A seat as everyone in the frame reads it (`name` is the persona's public name). */
export interface Seat {
  id: Uuid
  persona: Uuid
  name: string
  controller: SeatController
  /** The player's user id. */
  user: number | null
  /** The player's username (null for an open or AI seat). */
  player: string | null
  assistant: Uuid | null
  /** The persona's avatar; '' when it has none. */
  avatar_url: string
}

/** A seat as the invite page shows it: public face only, no truths but the universal one. */
export interface InviteSeat {
  id: Uuid
  persona: Uuid
  name: string
  avatar_url: string
  universal_truth: string
  controller: SeatController
  player: string | null
}

/** GET /api/spectate/{code}: what a spectator sees — never liquid, a narrative or table talk. */
export interface SpectatorView {
  id: Uuid
  name: string
  production_name: string
  status: FrameStatus
  mode: FrameMode
  tempo: number
  seq: number
  seats: Seat[]
  outcomes: Outcome[]
  windows: FrameWindow[]
}

/** GET /api/frames/invite/{code}: what an invited (signed-in) user may read before joining. */
export interface InvitePreview {
  frame: { id: Uuid; name: string; production_name: string; status: FrameStatus; mode: FrameMode }
  /** The seat the caller already holds in this frame, if any. */
  my_seat: Uuid | null
  seats: InviteSeat[]
}

export type LiquidStatus = 'submitted' | 'committed' | 'consumed' | 'withdrawn'

/**
 * A submitted intention with the soft pass's analysis. `content` and `refined` are absent
 * when the reader may not read them (another player's, under liquid_visibility own/gm).
 */
export interface Liquid {
  id: Uuid
  seat: Uuid
  author: number | null
  status: LiquidStatus
  revision: number
  submitted_at: string
  committed_at: string | null
  /** null until the soft pass (or its heuristics) has answered. */
  pscale: number | null
  window_seconds: number | null
  interruptive: boolean
  /** Seat ids the action would interrupt. */
  targets: Uuid[]
  capable: boolean | null
  capable_reason: string
  /** '' while the analysis of this revision is pending; 'model' or 'heuristic' after. */
  analysis_source: string
  analysis_note: string
  content?: string
  refined?: string
}

export type ActionResult = 'success' | 'partial' | 'failure' | 'interrupted'

/** A guard's warning on an outcome (GM only): e.g. it repeats a secret. */
export interface OutcomeFlag {
  kind: string
  detail: string
}

/** The shared bones of what happened; `seq` is the frame's sequence number. */
export interface Outcome {
  id: Uuid
  seq: number
  /** The seat whose pass produced it. */
  seat: Uuid
  actions_resolved: { seat: Uuid; action: string; result: ActionResult | string }[]
  world_facts: string[]
  interrupts: { seat: Uuid; reason: string }[]
  witnesses: Uuid[]
  created_at: string
  flags?: OutcomeFlag[]
}

export type NarrativeStatus = 'streaming' | 'done' | 'failed'

/** A character's prose (its player's and the GM's), or a shared frame's one prose (`shared`). */
export interface Narrative {
  id: Uuid
  seat: Uuid
  text: string
  /** How many streamed deltas `text` holds: the next delta's index. */
  token_count: number
  outcome_ids: Uuid[]
  liquid_ids: Uuid[]
  trigger: string
  pscale: number
  status: NarrativeStatus
  created_at: string
  shared: boolean
  /** Who played the seat when it was written (null: nobody, or a shared narrative). */
  user: number | null
}

export type WindowStatus = 'open' | 'firing' | 'fired' | 'cancelled' | 'failed'

/** A character's timer. While the frame is paused `expires_at` is null and `remaining_seconds` kept. */
export interface FrameWindow {
  id: Uuid
  seat: Uuid
  status: WindowStatus
  pscale: number
  opened_at: string
  expires_at: string | null
  remaining_seconds: number | null
}

/** GET /api/frames/{id}: the caller's view (the GM's holds everything). */
export interface FrameView {
  id: Uuid
  production: Uuid
  name: string
  status: FrameStatus
  mode: FrameMode
  tempo: number
  liquid_visibility: LiquidVisibility
  seq: number
  is_gm: boolean
  my_seats: Uuid[]
  /** Only the GM reads it. */
  invite_code: string | null
  /** The spectator link's code while the GM allows spectators (GM only; older servers omit it). */
  spectator_code?: string | null
  seats: Seat[]
  liquid: Liquid[]
  outcomes: Outcome[]
  narratives: Narrative[]
  windows: FrameWindow[]
  /** Table talk, oldest first (the newest 200). Older servers leave it out. */
  talk?: TalkMessage[]
  /** Which model plays each pass (the GM's view only). */
  models?: FrameModels
  /** The guard's flags on AI-written intentions, by liquid id (the GM's view only; null for players). */
  liquid_flags?: Record<Uuid, OutcomeFlag[]> | null
  /** The names of the players who played the seats when their narratives were written, by user id. */
  narrators?: Record<string, string>
}

/** A player the GM kicked from a frame: no seat of it until the GM allows them back. */
export interface FrameBan {
  user: number
  player: string
  banned_at: string
}

/** Why a pass plays on its model: the GM chose it for the frame, the character's assistant's, the cast's most common, the GM's default. */
export type ModelSource = 'frame' | 'assistant' | 'cast' | 'default'

export interface PlayedModel {
  id: Uuid
  name: string
  source: ModelSource
}

export interface FrameModels {
  /** The GM's choices (null: the default rule). */
  soft_model: Uuid | null
  medium_model: Uuid | null
  /** The model each pass uses now (null: none at all). */
  soft: PlayedModel | null
  /** Seat id → the model of that seat's medium pass. */
  medium: Record<Uuid, PlayedModel | null>
}

/** PATCH /api/frames/{id} (GM): any of these; a model null goes back to the default rule. */
export interface FrameUpdateInput {
  name?: string
  tempo?: number
  liquid_visibility?: LiquidVisibility
  soft_model?: Uuid | null
  medium_model?: Uuid | null
}

/** An out-of-character message at the table: everyone in the frame reads it, no pass does. */
export interface TalkMessage {
  id: Uuid
  /** The speaker's seat; null for the GM. */
  seat: Uuid | null
  author: string | null
  gm: boolean
  text: string
  created_at: string
}

export interface FrameCreateInput {
  name: string
  mode?: FrameMode
  tempo?: number
  liquid_visibility?: LiquidVisibility
  /** Persona ids of the cast that wait for players; the others are played by their assistant. */
  open_seats?: Uuid[]
  soft_model?: Uuid | null
  medium_model?: Uuid | null
}

export interface SeatUpdateInput {
  controller: 'open' | 'ai'
  assistant?: Uuid | null
}

export type PassKind = 'soft' | 'medium'
export type PassStatus = 'pending' | 'running' | 'done' | 'failed'

export interface LLMCallInfo {
  purpose: string
  kind: string
  model_id: string
  prompt_tokens: number | null
  completion_tokens: number | null
  latency_ms: number | null
  error: string
  finished_at: string | null
}

/** What one step of a pass (`bones`, `flesh`, ...) was compiled to send, before sending. */
export interface PassStepMessages {
  step: string
  /** The pass's run (absent on a soft pass, which runs once). */
  attempt?: number
  messages: DirectiveMessage[]
}

/**
 * One model call of a structured step: exactly what the provider was sent (with any schema
 * instruction its adapter added), its raw answer, and why it was refused ('' when accepted).
 */
export interface PassTry {
  step: string
  attempt: number
  mode?: string
  messages: DirectiveMessage[]
  raw: string
  error: string
}

/** GET /api/frames/{id}/passes (GM): a pass with the exact messages sent, its tries and its LLM calls. */
export interface PassInfo {
  id: Uuid
  seat: Uuid
  kind: PassKind
  trigger: string
  status: PassStatus
  liquid: Uuid | null
  window: Uuid | null
  interrupt: { outcome: Uuid; reason: string } | null
  messages: PassStepMessages[]
  tries: PassTry[]
  error: string
  attempts: number
  created_at: string
  calls: LLMCallInfo[]
}
