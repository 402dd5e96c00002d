/**
 * Types of the LMiX REST API payloads, named for the app: aliases of the types `make types`
 * generates from the OpenAPI schema (./schema.ts) and the socket events (./events.ts), and
 * the few the schema cannot say (a model's `config`, a JSON object it only validates).
 */
import type { components } from './schema'

type Schemas = components['schemas']

export type Uuid = string

export type User = Schemas['User']

export type Provider = Schemas['Provider']

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
export type SamplerPreset = Schemas['SamplerPreset']
export type PromptPlaceholder = Schemas['Placeholder']
/** GET /api/prompt-controls: what the assistant and model forms offer. */
export type PromptControls = Schemas['PromptControls']

/** A model; its `config` is the JSON object the server validates (lmix/llm/params.py). */
export type Model = Omit<Schemas['LLMModel'], 'config'> & { config: ModelConfig }

/** `api_key` is write-only: omitted or '' keeps the stored key on update; null clears it. */
export type ModelInput = Omit<Schemas['LLMModelRequest'], 'config'> & { config?: ModelConfig }

export type ModelTestInput = Schemas['ModelTestRequest']
export type ModelTestResult = Schemas['ModelTestResult']

export type World = Schemas['World']
export type WorldInput = Pick<World, 'name' | 'description'> & Partial<Pick<World, 'lore_scan_depth' | 'lore_budget'>>

/** Who may know a lore entry: everyone, the members of one affiliation, or one persona. */
export type LoreLayer = Schemas['LoreLayer']
export type LoreEntry = Schemas['LoreEntry']
export type LoreEntryInput = Pick<LoreEntry, 'keys' | 'content' | 'enabled' | 'layer' | 'affiliation' | 'persona' | 'priority'>

export type Scenario = Schemas['Scenario']
export type ScenarioInput = Pick<Scenario, 'name' | 'description'>

export type Affiliation = Schemas['Affiliation']
export type AffiliationInput = Pick<
  Affiliation,
  'name' | 'universal_truth' | 'internal_truth' | 'external_truth'
>

export type Persona = Schemas['Persona']
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

export type Assistant = Omit<Schemas['Assistant'], 'config_override'> & { config_override: ModelConfig }
export type AssistantInput = Pick<Assistant, 'persona' | 'model' | 'name' | 'config_override'> &
  Partial<Pick<Assistant, 'system_prompt_template'>>

export type ProductionSummary = Schemas['Production']
export type ProductionInput = Pick<
  ProductionSummary,
  'name' | 'world' | 'scenario' | 'assistants' | 'show_directive'
>

export type CastMember = Schemas['Cast']
export type TurnStatus = Schemas['TurnStatus']
export type Turn = Schemas['Turn']
export type DirectiveMessage = NonNullable<Turn['directive']>[number]
export type ProductionDetail = Schemas['ProductionDetail']
/** What a rewind undoes (a dry run's answer too), and the head that restores it. */
export type ProductionRewindAnswer = Schemas['ProductionRewindAnswer']
/** The cast's character state at the production's head. */
export type ProductionState = Schemas['ProductionStateAnswer']
export type CastMemberState = Schemas['CastMemberState']

export type TurnCreateInput = Schemas['TurnRequestRequest']

// Events the production and frame sockets send (their control frames `ready`, `pong` and
// `error` are useLiveSocket's): generated from the server's models by `make types`.
export type { AutoplayStop, FrameMessage, PassSummary, ServerMessage } from './events'
export type DraftMessage = Extract<ServerMessage, { type: `draft.${string}` }>
export type WindowCancelCause = NonNullable<WindowCancelled['cause']>
import type { ServerMessage, WindowCancelled } from './events'

// ---------- Frames (live scenes): generated from synthesis/answers.py and the frames
// serializers (src/api/schema.ts, `make types`); the names the app uses. ----------
export type FrameStatus = Schemas['FrameStatus']
/** per_character: each character its own window and narrative; shared: one prose for all. */
export type FrameMode = Schemas['FrameMode']
/** Who reads submitted intentions: everyone, each player their own, or only the GM. */
export type LiquidVisibility = Schemas['LiquidVisibility']
/** What the secret guard does with an outcome that may reveal a secret: hold it for the GM's review, or show it and flag it. */
export type LeakGuard = Schemas['LeakGuard']
/** The choices of `LeakGuard` as the GM's forms word them. */
export const LEAK_GUARDS: { value: LeakGuard; label: string }[] = [
  { value: 'hold', label: 'Hold outcomes that may reveal a secret until I review them' },
  { value: 'flag', label: 'Show them and flag them to me' },
]
export type SeatController = Schemas['SeatController']

/** GET /api/frames: a frame I run or sit in (my character, whom a running round waits for). */
export type FrameSummary = Schemas['FrameSummary']
/** GET /api/frames/{id}/epilogue: a closed scene's epilogues I may read, and where their writing stands. */
export type EpilogueView = Schemas['EpilogueView']
/** GET /api/frames/{id}/scenes: the frame's scenes, with the summaries I may read. */
export type SceneList = Schemas['SceneList']
export type SceneItem = Schemas['SceneItem']
export type SceneClosed = Schemas['SceneClosed']
export type Epilogue = Schemas['EpilogueBody']
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
/** What an author's or designer's writing came to: its pass, then what it made or why it failed. */
export type FaceResult = NonNullable<Liquid['result']>

export type ActionResult = 'success' | 'partial' | 'failure' | 'interrupted'
/** The shared bones of what happened; `seq` is the frame's sequence number. */
export type Outcome = Schemas['OutcomeBody']
/** PATCH /api/outcomes/{id}: the GM's new texts of an outcome (each action, each fact, each interrupt's reason). */
export type OutcomeEditInput = Schemas['PatchedOutcomeEditRequest']
/** POST /api/outcomes/{id}/regenerate: the passes that run their bones again. */
export type OutcomeRegenerated = Schemas['OutcomeRegenerated']
/** A guard's warning on an outcome (GM only): e.g. it repeats a secret. */
export type OutcomeFlag = NonNullable<Outcome['flags']>[number]

export type NarrativeStatus = Schemas['NarrativeStatus']
/** A character's prose (its player's and the GM's), or a shared frame's one prose (`shared`). */
export type Narrative = Schemas['NarrativeBody']
/** GET /api/frames/{id}/export?format=json: the reader's story to keep. */
export type FrameExport = Schemas['FrameExport']

export type WindowStatus = Schemas['WindowStatus']
/** A character's timer. While the frame is paused `expires_at` is null and `remaining_seconds` kept. */
export type FrameWindow = Schemas['WindowBody']

/** GET /api/frames/{id}: the caller's view (the GM's holds everything). */
export type FrameView = Schemas['FrameView']
/** A player the GM kicked from a frame: no seat of it until the GM allows them back. */
export type FrameBan = Schemas['FrameBanBody']
/** GET /api/frames/{id}/budget (GM): this minute's model use against the frame's limits. */
export type FrameBudget = Schemas['FrameBudget']
/** GET /api/frames/{id}/calls (GM): a page of the frame's LLM calls, newest first, and its totals. */
export type FrameCalls = Schemas['FrameCalls']
/** One LLM call of a frame: purpose, the pass or AI seat it was for, model, tokens, latency, error. */
export type FrameCall = Schemas['FrameCall']
export type FrameCallStatus = Schemas['FrameCallStatusEnum']
export type FrameCallTotals = Schemas['FrameCallTotals']
export type ModelQueue = Schemas['ModelQueue']
/**
 * GET /api/frames/{id}/seats/{seat}/sheet (the seat's player or the GM): the character sheet
 * and scene intro, exactly what the character's prompts may know.
 */
export type CharacterSheet = Schemas['CharacterSheet']
/** A group as the sheet's character sees it: `internal` empty unless a member. */
export type SheetGroup = Schemas['SheetGroup']
/** Another character as the sheet's character knows them: public face, real name only if shared. */
export type SheetOther = Schemas['SheetOther']
/**
 * GET /api/frames/{id}/seats/{seat}/state (the seat's player or the GM): the character's
 * relationships, mood, learned facts and memories, as the state passes left them.
 */
export type SeatState = Schemas['SeatStateAnswer']
export type StateEditInput = Schemas['PatchedStateEditRequest']
export type MemoryEditInput = Schemas['PatchedMemoryEditRequest']
/** How the character sees another: affinity and trust 0–100, their level, what it knows of them. */
export type StateEdge = Schemas['StateEdge']
/** One of the character's memories: only of what it witnessed. */
export type StateMemory = Schemas['StateMemory']
/** POST /api/frames/{id}/snapshots (the GM): what an import restored, and the names it could not place. */
export type SnapshotImported = Schemas['SnapshotImported']
/** POST /api/frames/{id}/seats/{seat}/reset (the GM): the snapshot taken first, which restores it. */
export type SeatResetDone = Schemas['SeatResetDone']
/** GET /api/frames/{id}/snapshots (the GM): the frame's kept snapshots, newest first. */
export type SnapshotRecord = Schemas['SnapshotRecord']

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

/** The role one writes in: through a character, adding world content, or writing skills. */
export type Face = Schemas['Face']
/**
 * A skill (GET /api/skills): the platform's (read-only; `guard` ones always apply), the
 * caller's own, or a frame's its GM runs. In each face and category the most specific wins.
 */
export type Skill = Schemas['SkillBody']
/** POST /api/skills (with `frame`: that frame's, by its GM); PATCH takes any of it. */
export type SkillInput = Schemas['SkillWriteRequest']

/** World content of a frame (a location, an NPC, an item, an event, lore): everyone at the table reads it. */
export type ContentEntry = Schemas['ContentBody']
export type ContentType = ContentEntry['type']
/** POST /api/frames/{id}/content (the GM); PATCH takes any of it. */
export type ContentInput = Schemas['ContentWriteRequest']
