/** Types of the LMiX REST API payloads, as the backend contract defines them. */

export type Uuid = string

export interface User {
  id: number | string
  username: string
  email: string
}

export type Provider = 'openai' | 'openai_compatible' | 'ollama' | 'anthropic' | 'offline'

export interface ModelConfig {
  temperature?: number
  max_tokens?: number
  top_p?: number
  [key: string]: unknown
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
}

interface Stamped {
  id: Uuid
  created_at: string
  updated_at: string
}

export interface World extends Stamped {
  name: string
  description: string
}
export type WorldInput = Pick<World, 'name' | 'description'>

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
  avatar_url: string
  style: string
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
  display_name: string
  persona_name: string
  avatar_url: string
  model_name: string
}
export type AssistantInput = Pick<Assistant, 'persona' | 'model' | 'name' | 'config_override'>

export interface ProductionSummary extends Stamped {
  name: string
  world: Uuid
  scenario: Uuid
  world_name: string
  scenario_name: string
  assistants: Uuid[]
  show_directive: boolean
  turn_count: number
}
export type ProductionInput = Pick<
  ProductionSummary,
  'name' | 'world' | 'scenario' | 'assistants' | 'show_directive'
>

export interface CastMember {
  id: Uuid
  display_name: string
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
  speaker_kind: 'assistant' | 'director'
  assistant: Uuid | null
  speaker_name: string
  avatar_url: string
  content: string
  /** How many streamed deltas `content` already holds (tokens below it are duplicates). */
  token_count: number
  /** Generation runs started (a run is restarted when its worker died). */
  attempts?: number
  status: TurnStatus
  error: string
  model_id: string
  prompt_tokens: number | null
  completion_tokens: number | null
  latency_ms: number | null
  created_at: string
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
  parent?: Uuid | null
  content?: string
}

/**
 * Events the production websocket sends (its control frames `ready`, `pong` and `error`
 * are handled by useLiveSocket). State events carry the production's `seq`; a streamed
 * delta carries only its `index` within the turn's current run.
 */
export type ServerMessage =
  | { type: 'turn.created'; seq: number; turn: Turn }
  | { type: 'turn.token'; turn: Uuid; attempt?: number; index: number; delta: string }
  /** The turn's worker died: it is generated again from the start (text reset). */
  | { type: 'turn.restarted'; seq: number; turn: Turn; attempt: number }
  | { type: 'turn.done'; seq: number; turn: Turn }
  | { type: 'turn.failed'; seq: number; turn: Turn }
  | { type: 'autoplay'; seq: number; autoplay_remaining: number }
