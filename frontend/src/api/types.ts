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
import type { components } from './schema'

// ---------- Frames (live scenes): generated from synthesis/answers.py and the frames
// serializers (src/api/schema.ts, `make types`); the names the app uses. ----------
type Schemas = components['schemas']

export type FrameStatus = Schemas['FrameStatus']
/** per_character: each character its own window and narrative; shared: one prose for all. */
export type FrameMode = Schemas['FrameMode']
/** Who reads submitted intentions: everyone, each player their own, or only the GM. */
export type LiquidVisibility = Schemas['LiquidVisibility']
export type SeatController = Schemas['SeatController']

/** GET /api/frames: a frame I run or sit in. */
export type FrameSummary = Schemas['FrameSummary']
/** A seat as everyone in the frame reads it (`name` is the persona's public name). */
export type Seat = Schemas['SeatBody']
/** A seat as the invite page shows it: public face only, no truths but the universal one. */
export type InviteSeat = Schemas['InviteSeat']
/** GET /api/spectate/{code}: what a spectator sees — never liquid, a narrative or table talk. */
export type SpectatorView = Schemas['SpectatorView']
/** GET /api/frames/invite/{code}: what an invited (signed-in) user may read before joining. */
export type InvitePreview = Schemas['InvitePreview']

export type LiquidStatus = Schemas['LiquidStatus']
/**
 * A submitted intention with the soft pass's analysis. `content` and `refined` are absent
 * when the reader may not read them (another player's, under liquid_visibility own/gm).
 */
export type Liquid = Schemas['LiquidBody']

export type ActionResult = 'success' | 'partial' | 'failure' | 'interrupted'
/** The shared bones of what happened; `seq` is the frame's sequence number. */
export type Outcome = Schemas['OutcomeBody']
/** A guard's warning on an outcome (GM only): e.g. it repeats a secret. */
export type OutcomeFlag = NonNullable<Outcome['flags']>[number]

export type NarrativeStatus = Schemas['NarrativeStatus']
/** A character's prose (its player's and the GM's), or a shared frame's one prose (`shared`). */
export type Narrative = Schemas['NarrativeBody']

export type WindowStatus = Schemas['WindowStatus']
/** A character's timer. While the frame is paused `expires_at` is null and `remaining_seconds` kept. */
export type FrameWindow = Schemas['WindowBody']

/** GET /api/frames/{id}: the caller's view (the GM's holds everything). */
export type FrameView = Schemas['FrameView']
/** A player the GM kicked from a frame: no seat of it until the GM allows them back. */
export type FrameBan = Schemas['FrameBanBody']
/** GET /api/frames/{id}/budget (GM): this minute's model use against the frame's limits. */
export type FrameBudget = Schemas['FrameBudget']

/** Why a pass plays on its model: the GM chose it for the frame, the character's assistant's, the cast's most common, the GM's default. */
export type ModelSource = Schemas['SourceEnum']
export type PlayedModel = Schemas['PlayedModel']
export type FrameModels = Schemas['FrameModels']

/** An out-of-character message at the table: everyone in the frame reads it, no pass does. */
export type TalkMessage = Schemas['TalkBody']

/** PATCH /api/frames/{id} (GM): any of these; a model null goes back to the default rule. */
export type FrameUpdateInput = Schemas['PatchedFrameUpdateRequest']
export type FrameCreateInput = Schemas['FrameCreateRequest']
export type SeatUpdateInput = Schemas['PatchedSeatUpdateRequest']

export type PassKind = Schemas['PassKind']
export type PassStatus = Schemas['PassStatus']
/** GET /api/frames/{id}/passes (GM): a pass with the exact messages sent, its tries and its LLM calls. */
export type PassInfo = Schemas['PassInfo']
export type LLMCallInfo = Schemas['LLMCallInfo']
/** What one step of a pass (`bones`, `flesh`, ...) was compiled to send, before sending. */
export type PassStepMessages = PassInfo['messages'][number]
/**
 * One model call of a structured step: exactly what the provider was sent (with any schema
 * instruction its adapter added), its raw answer, and why it was refused ('' when accepted).
 */
export type PassTry = PassInfo['tries'][number]
